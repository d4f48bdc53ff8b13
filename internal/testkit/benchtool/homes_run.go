package main

func cmdHomes(args []string) error { return nil }
