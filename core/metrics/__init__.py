"""In-process metrics: counters and histograms with tags, dumped as JSON or Prometheus text."""
