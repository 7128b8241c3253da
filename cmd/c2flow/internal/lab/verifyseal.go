package lab

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/c2flow/c2flow/cmd/c2flow/internal/cli"
	"github.com/c2flow/c2flow/filecoin/groth"
)

func RunVerifySeal(ctx context.Context, args []string) error {
	return verifySeal(ctx, args, os.Stdout, os.Stderr)
}

// maxRecordLine bounds one record line (a 32GiB non-interactive record's
// proof, 23,092 bytes written as JSON numbers, is ~90 KB).
const maxRecordLine = 16 << 20

// verifySeal verifies seal records (rust-fil-proofs' seal regression
// format: one JSON object a line) with a bellperson verifying key and
// prints one line per record to out: "FILE:LINE: ok (...)" or
// "FILE:LINE: invalid: REASON (...)", or "skipped" for records of another
// sector size than --sector-size. It returns an error when any record is
// invalid.
func verifySeal(ctx context.Context, args []string, out, logw io.Writer) error {
	fs := cli.NewFlags("verify-seal")
	vkPath := fs.String("vk", "", "the seal proof's verifying key, in bellperson's .vk format (e.g. /var/tmp/filecoin-proof-parameters/v28-stacked-proof-of-replication-...-sha256_hasher-<id>.vk)")
	sectorSize := fs.Uint64("sector-size", 0, "verify only the records of this sector size in bytes (e.g. 2048); the others are reported as skipped (0: verify all)")
	files, err := cli.ParseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if *vkPath == "" || len(files) == 0 {
		fs.Usage()
		return fmt.Errorf("verify-seal: usage: c2flow verify-seal --vk FILE [--sector-size N] RECORDS... (\"-\": stdin)")
	}
	vk, err := groth.ReadVerifyingKeyFile(*vkPath)
	if err != nil {
		return fmt.Errorf("verify-seal: %w", err)
	}
	pvk := vk.Prepare()
	var ok, invalid, skipped int
	t0 := time.Now()
	var ferr error
	for _, name := range files {
		if ferr = verifySealFile(ctx, name, pvk, *sectorSize, out, &ok, &invalid, &skipped); ferr != nil {
			break
		}
	}
	// The summary even when a file could not be read to its end: what
	// was checked before is reported.
	fmt.Fprintf(logw, "verify-seal: %d ok, %d invalid, %d skipped in %v (verifying key %s, %d public inputs)\n",
		ok, invalid, skipped, time.Since(t0).Round(time.Millisecond), *vkPath, vk.NumPublic())
	if ferr != nil {
		return ferr
	}
	if invalid > 0 {
		return fmt.Errorf("verify-seal: %d of %d records invalid", invalid, ok+invalid)
	}
	if ok == 0 {
		return fmt.Errorf("verify-seal: no record verified")
	}
	return nil
}

func verifySealFile(ctx context.Context, name string, pvk *groth.PreparedVerifyingKey, sectorSize uint64, out io.Writer, ok, invalid, skipped *int) error {
	return eachRecordLine(ctx, "verify-seal", name, func(n int, line []byte, size int64) {
		if size > maxRecordLine {
			// Not a record: report it and go on with the next line.
			*invalid++
			fmt.Fprintf(out, "%s:%d: invalid: line of %d bytes, over the %d MiB a record may take\n", name, n, size, maxRecordLine>>20)
			return
		}
		checkSealLine(name, n, line, pvk, sectorSize, out, ok, invalid, skipped)
	})
}

// eachRecordLine calls check with each line of the record file name ("-":
// stdin), numbered from 1, without its newline and surrounding space, and
// its size; a line over maxRecordLine (size says so) comes without its
// bytes. cmd names the command in errors.
func eachRecordLine(ctx context.Context, cmd, name string, check func(n int, line []byte, size int64)) error {
	var r io.Reader
	if name == "-" {
		r = os.Stdin
	} else {
		f, err := os.Open(name)
		if err != nil {
			return fmt.Errorf("%s: %w", cmd, err)
		}
		defer f.Close()
		r = f
	}
	br := bufio.NewReaderSize(r, 1<<20)
	for n := 1; ; n++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		raw, size, err := readRecordLine(br, maxRecordLine)
		if err != nil && err != io.EOF {
			return fmt.Errorf("%s: reading %s at line %d: %w", cmd, name, n, err)
		}
		if size == 0 && err == io.EOF {
			return nil
		}
		check(n, bytes.TrimSpace(raw), size)
		if err == io.EOF {
			return nil
		}
	}
}

// readRecordLine reads one line, without its newline, and its length in
// bytes. A line longer than max is read to its end but not kept (line is
// nil): one huge line costs max bytes of memory, not its length.
func readRecordLine(br *bufio.Reader, max int) (line []byte, size int64, err error) {
	for {
		frag, err := br.ReadSlice('\n')
		size += int64(len(frag))
		if size <= int64(max)+1 {
			line = append(line, frag...)
		} else {
			line = nil
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err == nil { // the newline ends the line
			size--
			if line != nil {
				line = line[:len(line)-1]
			}
		}
		return line, size, err
	}
}

// checkSealLine verifies the record on line n of name and reports it.
func checkSealLine(name string, n int, line []byte, pvk *groth.PreparedVerifyingKey, sectorSize uint64, out io.Writer, ok, invalid, skipped *int) {
	if len(line) == 0 {
		return
	}
	rec, err := groth.ParseSealRecord(line)
	if err != nil {
		*invalid++
		fmt.Fprintf(out, "%s:%d: invalid: %v\n", name, n, err)
		return
	}
	desc := fmt.Sprintf("sector %d, %v", rec.SectorID, rec.Config)
	if sectorSize != 0 && rec.Config.SectorSize != sectorSize {
		*skipped++
		fmt.Fprintf(out, "%s:%d: skipped (%s; --sector-size %d)\n", name, n, desc, sectorSize)
		return
	}
	if err := groth.VerifySeal(pvk, rec); err != nil {
		*invalid++
		fmt.Fprintf(out, "%s:%d: invalid: %v (%s)\n", name, n, err, desc)
		return
	}
	*ok++
	fmt.Fprintf(out, "%s:%d: ok (%s)\n", name, n, desc)
}
