//go:build !unix

package workspace

// oNoFollow is O_NOFOLLOW where there is one.
const oNoFollow = 0
