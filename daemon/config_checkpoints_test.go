package daemon

import "testing"

// HEARTH_CHECKPOINT_SIZE takes bytes, or K, M and G (binary), with or
// without a trailing B or iB; anything else is refused.
func TestParseCheckpointSize(t *testing.T) {
	for in, want := range map[string]int64{"512M": 512 << 20, "2G": 2 << 30, "100": 100, "64KiB": 64 << 10, "1mb": 1 << 20} {
		if got, ok := parseSize(in); !ok || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "M", "-1M", "12X", "1.5G", "99999999999G"} {
		if got, ok := parseSize(in); ok {
			t.Errorf("parseSize(%q) = %d; want it refused", in, got)
		}
	}
	t.Setenv("HEARTH_CHECKPOINT_SIZE", "1G")
	t.Setenv("HEARTH_CHECKPOINT_TURNS", "50")
	var c Config
	if err := c.checkpointsFromEnv(); err != nil || c.checkpointBudget().Bytes != 1<<30 || c.checkpointBudget().Turns != 50 {
		t.Errorf("from the environment: %+v, %v", c.checkpointBudget(), err)
	}
	t.Setenv("HEARTH_CHECKPOINT_TURNS", "0")
	if err := c.checkpointsFromEnv(); err == nil {
		t.Error("HEARTH_CHECKPOINT_TURNS=0 accepted")
	}
}
