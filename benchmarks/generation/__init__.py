"""Generation speed: the HF backend's slot decoder against model.generate."""
