package sandbox

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"corral/sandbox/internal/fileops"
)

// The benchmarks compare each operation through both layers (os.Root under
// the WASI guest) with the same code run natively on plain os calls, so the
// difference is what confinement costs. BenchmarkOS* are plain os calls.

func benchFile(b *testing.B, size int) (dir string) {
	dir = b.TempDir()
	line := strings.Repeat("x", 63) + "\n"
	if err := os.WriteFile(filepath.Join(dir, "f.txt"), []byte(strings.Repeat(line, size/64)), 0o644); err != nil {
		b.Fatal(err)
	}
	return dir
}

func benchGuest(b *testing.B, dir string) *Guest {
	_, g := newGuest(b, dir)
	if _, err := g.ListDir(context.Background(), "."); err != nil { // warm
		b.Fatal(err)
	}
	return g
}

// warm runs op until the guest's heap has grown to what op needs. A fresh
// guest's memory grows from 3 to about 8 MiB over its first thousand or so
// calls, and each growth copies it whole: a one-time cost of some tens of
// milliseconds, not a cost per call.
func warm(b *testing.B, op func() error) {
	for range 2000 {
		if err := op(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRead reads a 1 KiB and a 1 MiB file whole, and a 1 MiB file as
// read_file does, up to its 20,000-character clamp.
func BenchmarkRead(b *testing.B) {
	for _, c := range []struct {
		name         string
		size, budget int
	}{
		{"1KiB", 1 << 10, 2 << 10},
		{"1MiB", 1 << 20, 2 << 20},
		{"1MiB-clamped", 1 << 20, 20000},
	} {
		dir := benchFile(b, c.size)
		check := func(r ReadReply, err error) error {
			if err == nil && len(r.Text) != min(c.size, c.budget/64*64) {
				err = fmt.Errorf("read %d bytes", len(r.Text))
			}
			return err
		}
		b.Run(c.name+"/guest", func(b *testing.B) {
			g := benchGuest(b, dir)
			read := func() error { return check(g.ReadFile(context.Background(), "f.txt", 1, 0, c.budget)) }
			if c.size < 1<<20 {
				warm(b, read)
			}
			b.SetBytes(int64(c.size))
			for b.Loop() {
				if err := read(); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/native", func(b *testing.B) {
			o := fileops.Ops{Dir: dir}
			b.SetBytes(int64(c.size))
			for b.Loop() {
				if err := check(o.Read("f.txt", 1, 0, c.budget)); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/os.ReadFile", func(b *testing.B) {
			b.SetBytes(int64(c.size))
			for b.Loop() {
				if _, err := os.ReadFile(filepath.Join(dir, "f.txt")); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkList1000(b *testing.B) {
	dir := b.TempDir()
	for i := range 1000 {
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("file-%04d.go", i)), nil, 0o644)
	}
	b.Run("guest", func(b *testing.B) {
		g := benchGuest(b, dir)
		list := func() error {
			_, err := g.ListDir(context.Background(), ".")
			return err
		}
		warm(b, list)
		for b.Loop() {
			if err := list(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("native", func(b *testing.B) {
		for b.Loop() {
			if e, err := (fileops.Ops{Dir: dir}).List("."); err != nil || len(e) != 1000 {
				b.Fatal(err)
			}
		}
	})
	b.Run("os.ReadDir", func(b *testing.B) {
		for b.Loop() {
			if _, err := os.ReadDir(dir); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkEdit100KiB(b *testing.B) {
	edit := func(b *testing.B, do func(old, repl string) error) {
		words := [2]string{"needle-one", "needle-two"}
		for i := 0; b.Loop(); i++ {
			if err := do(words[i%2], words[(i+1)%2]); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("guest", func(b *testing.B) {
		dir := benchFile(b, 100<<10)
		os.WriteFile(filepath.Join(dir, "f.txt"), append([]byte("needle-one\n"), must(os.ReadFile(filepath.Join(dir, "f.txt")))...), 0o644)
		g := benchGuest(b, dir)
		edit(b, func(old, repl string) error {
			_, err := g.Edit(context.Background(), EditRequest{Rel: "f.txt", Old: old, New: repl})
			return err
		})
	})
	b.Run("native", func(b *testing.B) {
		dir := benchFile(b, 100<<10)
		os.WriteFile(filepath.Join(dir, "f.txt"), append([]byte("needle-one\n"), must(os.ReadFile(filepath.Join(dir, "f.txt")))...), 0o644)
		o := fileops.Ops{Dir: dir}
		edit(b, func(old, repl string) error {
			rep, err := o.Edit(EditRequest{Rel: "f.txt", Old: old, New: repl})
			if err != nil {
				return err
			}
			_, err = o.Rename(rep.Temp, rep.Target)
			return err
		})
	})
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// BenchmarkMemory10k reads 1 MiB files 10,000 times as read_file does, up
// to its 20,000-character clamp, and reports the process's peak resident
// memory, heap and Wasm memory included.
func BenchmarkMemory10k(b *testing.B) {
	dir := b.TempDir()
	body := strings.Repeat(strings.Repeat("y", 127)+"\n", (1<<20)/128)
	for i := range 10 {
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d.txt", i)), []byte(body), 0o644)
	}
	g := benchGuest(b, dir)
	for b.Loop() {
		for i := range 10000 {
			if _, err := g.ReadFile(context.Background(), fmt.Sprintf("f%d.txt", i%10), 1, 0, 20000); err != nil {
				b.Fatal(err)
			}
		}
	}
	if hwm := procStatus("VmHWM"); hwm > 0 {
		b.ReportMetric(float64(hwm)/(1<<20), "peak-RSS-MiB")
	}
}

// procStatus returns a size from /proc/self/status in bytes, or 0.
func procStatus(field string) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}
