//go:build unix && !linux

package shell

// Without a child subreaper, a descendant that left its process group
// (setsid, a double fork) is reparented to init and cannot be found again:
// on these systems the group kill is all there is.
func enableSubreaper() {}

func (t *tree) sweepOrphans() {}
