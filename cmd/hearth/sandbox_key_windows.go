package main

// hideSecretsFromEnviron does nothing on Windows: there is no exec that
// keeps the process, and no /proc.
func hideSecretsFromEnviron([]string) error { return nil }

// takeKeyFD returns args: no --key-fd is ever passed on Windows.
func takeKeyFD(args []string) ([]string, string, bool, error) { return args, "", false, nil }
