// Package workspace is the agent's confined access to the sandbox's
// working directory: the request files a run or a session writes, the
// files a session reads and lists, and the descriptors the one-shot
// outputs are read from. User code runs beside these files and may plant
// symbolic links, hard links, pipes or devices there; every path
// resolves beneath an os.Root, every descriptor is checked where the
// kernel says it is (gVisor follows a link os.Root asks it not to), a
// write replaces a file rather than writing through it, and a read opens
// only regular files the user may read.
//
// It knows the wire's value types and nothing else of the agent.
package workspace
