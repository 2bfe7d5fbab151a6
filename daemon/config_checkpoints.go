package daemon

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// checkpointsFromEnv reads the checkpoint budget: HEARTH_CHECKPOINT_SIZE
// (bytes, or with a K, M or G suffix) and HEARTH_CHECKPOINT_TURNS.
func (c *Config) checkpointsFromEnv() error {
	if v := strings.TrimSpace(os.Getenv("HEARTH_CHECKPOINT_SIZE")); v != "" {
		n, ok := parseSize(v)
		if !ok || n <= 0 {
			return fmt.Errorf("HEARTH_CHECKPOINT_SIZE=%q: want a size such as 512M, 2G or a number of bytes", v)
		}
		c.CheckpointBytes = n
	}
	if v := strings.TrimSpace(os.Getenv("HEARTH_CHECKPOINT_TURNS")); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return fmt.Errorf("HEARTH_CHECKPOINT_TURNS=%q: want a positive number of turns", v)
		}
		c.CheckpointTurns = n
	}
	return nil
}

// parseSize reads bytes with an optional K, M or G suffix (binary: KiB,
// MiB, GiB; a trailing "iB" or "B" is allowed).
func parseSize(v string) (int64, bool) {
	u := strings.ToUpper(v)
	u = strings.TrimSuffix(strings.TrimSuffix(u, "B"), "I")
	shift := 0
	switch {
	case strings.HasSuffix(u, "K"):
		shift = 10
	case strings.HasSuffix(u, "M"):
		shift = 20
	case strings.HasSuffix(u, "G"):
		shift = 30
	}
	if shift > 0 {
		u = u[:len(u)-1]
	}
	n, err := strconv.ParseInt(strings.TrimSpace(u), 10, 64)
	if err != nil || n < 0 || n > (1<<62)>>shift {
		return 0, false
	}
	return n << shift, true
}
