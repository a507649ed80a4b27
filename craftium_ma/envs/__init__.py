"""One versioned module per shipped task, in PettingZoo's style: env(), parallel_env(), raw_env()."""
