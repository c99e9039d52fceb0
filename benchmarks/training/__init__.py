"""Training speed: the FPA engine's loss head and steps, our optimizer step against TRL's, and padding in the offline batches."""
