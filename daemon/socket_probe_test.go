package daemon

import (
	"bufio"
	"fmt"
	"net"
	"strings"
	"time"
)

// probes are hidden subcommands of this test binary (TestMain runs them)
// that play a process of their own: a client of the daemon's socket.
var probes = map[string]func(args []string) int{
	acpProbeSubcommand: func(args []string) int { return acpProbe(args[0]) },
}

// acpProbeSubcommand re-executes this test binary as a client of a hearth
// socket, the way a command the model runs could be one: acpProbe.
const acpProbeSubcommand = "__acp-probe"

// acpProbe connects to the daemon's socket at path and sends initialize. It
// prints "answered: " and the reply, or "refused: " and why there was none.
func acpProbe(path string) int {
	c, err := net.DialTimeout("unix", path, 5*time.Second)
	if err != nil {
		fmt.Println("refused:", err)
		return 1
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := fmt.Fprintln(c, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`); err != nil {
		fmt.Println("refused:", err)
		return 1
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		fmt.Println("refused:", err)
		return 1
	}
	fmt.Println("answered:", strings.TrimSpace(line))
	return 0
}
