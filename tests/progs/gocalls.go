// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

// gocalls: a Go program, for the tests of tracing Go (entry probes only).
//
// Built by the test that uses it (go build), not by make.
//
// Guaranteed facts:
//   - main starts 3 goroutines and waits for them; each calls round()
//     exactly 50 times.
//   - round() calls deep(100) once; deep(n) calls deep(n-1) for n > 0
//     (so deep runs 101 times per round), and deep(0) calls leaf() once.
//     In all: round 150, deep 15150, leaf 150.
//   - deep keeps a 1 KiB array on its stack, so the goroutine stacks (8 KiB
//     to start with) must grow several times: each growth makes the
//     function that needed it start again at its entry.
//   - The functions are not inlined (go:noinline).
//   - Prints "gocalls: total=757650" (150 rounds of deep(100) = 1 + 1 + 2
//     + ... + 100) and exits 0.
package main

import (
	"fmt"
	"sync"
)

//go:noinline
func leaf() int {
	return 1
}

//go:noinline
func deep(n int) int {
	var buf [1024]byte
	buf[n%1024] = byte(n)
	if n == 0 {
		return leaf()
	}
	return deep(n-1) + int(buf[n%1024])
}

//go:noinline
func round() int {
	return deep(100)
}

func main() {
	var wg sync.WaitGroup
	var mu sync.Mutex
	total := 0
	for g := 0; g < 3; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				v := round()
				mu.Lock()
				total += v
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	fmt.Printf("gocalls: total=%d\n", total)
}
