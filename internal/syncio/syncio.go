// Package syncio has the writers several goroutines share: every Write goes
// through whole, under a lock, so lines from different writers never mix.
package syncio

import (
	"bytes"
	"io"
	"sync"
)

// Writer is an io.Writer several goroutines may write at once, such as the
// clients' \shell commands writing to one output.
type Writer struct {
	mu sync.Mutex
	w  io.Writer
}

// NewWriter returns w behind a lock.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write writes b to the underlying writer under the lock.
func (l *Writer) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// Buffer is a bytes.Buffer that may be read while other goroutines write
// it, such as a child process's output copied in while it runs. Its zero
// value is an empty buffer.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p to the buffer.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String returns what has been written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// Reset empties the buffer.
func (b *Buffer) Reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.b.Reset()
}
