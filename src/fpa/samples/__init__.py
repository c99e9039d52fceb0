"""What a problem and its samples are, and how a model reads them: the problem record, the prompt templates,
tokenization and the pad token, the offline dataset of graded samples and its preference pairs. The
research core and the benchmark stages build on them; ``fpa.data`` prepares the files they are read from."""
