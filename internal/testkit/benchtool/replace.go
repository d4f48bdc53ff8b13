package main

import (
	"bufio"
	"os"
)

// replaceFile writes path through a temporary file renamed over it, so
// that an interrupted run leaves no half-written input: write makes the
// file named tmp; on failure it is removed.
func replaceFile(path string, write func(tmp string) error) error {
	tmp := path + ".tmp"
	err := write(tmp)
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// createBuffered creates the file tmp and hands fn a buffered writer on
// it (a write function for replaceFile).
func createBuffered(tmp string, fn func(w *bufio.Writer) error) error {
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	err = fn(w)
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
