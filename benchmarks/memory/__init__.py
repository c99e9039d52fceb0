"""Training memory: the loss head over rows and chunk sizes, FSDP2 against DDP per rank, and the memory planner's estimate against measured peaks."""
