package main

// runRollout runs the CLI in-process.
func runRollout(args ...string) (code int, stdout, stderr string) {
	io, out, errb := testIO("")
	code = run(args, io)
	return code, out.String(), errb.String()
}
