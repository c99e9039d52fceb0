"""Training speed: our optimizer step against TRL's, and padding in the offline batches."""
