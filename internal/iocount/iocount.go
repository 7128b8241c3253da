// Package iocount counts the bytes that pass through a reader or a
// writer: the size of what was streamed, known without holding it.
package iocount

import "io"

// Reader counts the bytes read from R.
type Reader struct {
	R io.Reader
	N int64
}

func (c *Reader) Read(p []byte) (int, error) {
	n, err := c.R.Read(p)
	c.N += int64(n)
	return n, err
}

// Writer counts the bytes written to W.
type Writer struct {
	W io.Writer
	N int64
}

func (c *Writer) Write(p []byte) (int, error) {
	n, err := c.W.Write(p)
	c.N += int64(n)
	return n, err
}
