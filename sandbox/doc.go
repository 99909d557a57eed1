// Package sandbox confines file access to a workspace.
//
// Confinement has layers, and each one is meant to hold on its own:
//
//  1. TryResolve decides lexically whether a path names something inside the
//     workspace root. It is the one path check in corral: every path that a
//     model, a peer or a script hands to corral goes through it, and its
//     refusal is the message the model reads.
//  2. Every file operation then goes through an [os.Root] opened on the
//     workspace root, so that symlinks, absolute or relative, dangling or
//     chained, and links swapped in after the check cannot lead outside.
//  3. The file tools themselves run inside a WASI guest (see [Guest]) that
//     sees only the workspace, mounted through an os.Root-backed file system
//     rather than wazero's directory mount, which follows symlinks on the
//     host and whose documentation says it is not a security boundary.
package sandbox
