"""Multi-turn chat sessions persisted in `<state>/sessions.sqlite`."""
