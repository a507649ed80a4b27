"""One versioned module per shipped task, PettingZoo style: env(), parallel_env(), raw_env()."""
