package main

import "fmt"

// plural is "1 workspace", "2 workspaces": a count with its noun (a regular
// one: the plural adds an s).
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
