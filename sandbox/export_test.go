package sandbox

import "corral/sandbox/internal/guestsrc"

func guestSourcesHash() (string, error) { return guestsrc.Hash(".") }
