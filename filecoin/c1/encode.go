package c1

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"strconv"

	"github.com/c2flow/c2flow/internal/atomicfile"
)

// Marshal returns the C1 as serde_json::to_vec writes it: compact JSON,
// fields in Rust declaration order. c must pass Validate; then
// Decode(Marshal(c)) reproduces c.
func Marshal(c *SealCommitPhase1Output) ([]byte, error) {
	if err := Validate(c); err != nil {
		return nil, fmt.Errorf("c1: marshal: %w", err)
	}
	var b bytes.Buffer
	encodeOutput(&b, c)
	return b.Bytes(), nil
}

// Encode writes the C1 to w as Marshal does, without holding the whole
// encoding in memory.
func Encode(w io.Writer, c *SealCommitPhase1Output) error {
	if err := Validate(c); err != nil {
		return fmt.Errorf("c1: encode: %w", err)
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	encodeOutput(bw, c)
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("c1: encode: write: %w", err)
	}
	return nil
}

// MarshalCommit2In returns the C1 wrapped as lotus-bench's Commit2In
// {SectorNum, Phase1Out, SectorSize}, byte-identical to Go's json.Marshal
// of that struct with Phase1Out = Marshal(c) (base64, standard padded
// alphabet) and SectorSize the registered proof's sector size.
func MarshalCommit2In(sectorNum int64, c *SealCommitPhase1Output) ([]byte, error) {
	var b bytes.Buffer
	if err := EncodeCommit2In(&b, sectorNum, c); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// WriteFile writes a C1 to path as filecoin-ffi writes it (Encode), whole
// or not at all.
func WriteFile(path string, c *SealCommitPhase1Output) error {
	return atomicfile.Write(path, func(w io.Writer) error { return Encode(w, c) })
}

// EncodeCommit2In writes the C1 wrapped as MarshalCommit2In does,
// streaming the base64. sectorNum must not be negative.
func EncodeCommit2In(w io.Writer, sectorNum int64, c *SealCommitPhase1Output) error {
	if err := Validate(c); err != nil {
		return fmt.Errorf("c1: encode Commit2In: %w", err)
	}
	if sectorNum < 0 {
		return fmt.Errorf("c1: encode Commit2In: negative sector number %d", sectorNum)
	}
	info, _ := c.RegisteredProof.Info() // Validate checked it
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.WriteString(`{"SectorNum":`)
	bw.WriteString(strconv.FormatInt(sectorNum, 10))
	bw.WriteString(`,"Phase1Out":"`)
	b64 := base64.NewEncoder(base64.StdEncoding, bw)
	inner := bufio.NewWriterSize(b64, 48<<10)
	encodeOutput(inner, c)
	if err := inner.Flush(); err != nil {
		return fmt.Errorf("c1: encode Commit2In: write: %w", err)
	}
	if err := b64.Close(); err != nil {
		return fmt.Errorf("c1: encode Commit2In: write: %w", err)
	}
	bw.WriteString(`","SectorSize":`)
	bw.WriteString(strconv.FormatUint(info.SectorSize, 10))
	bw.WriteByte('}')
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("c1: encode Commit2In: write: %w", err)
	}
	return nil
}

// sink is where the encoder writes. Both implementations used
// (*bytes.Buffer, *bufio.Writer) never fail or keep the first error until
// Flush, so the encoder ignores per-call errors.
type sink interface {
	io.Writer
	io.ByteWriter
	io.StringWriter
}

// decimal[b] is b in decimal, as serde_json writes a u8.
var decimal = func() (t [256]string) {
	for i := range t {
		t[i] = strconv.Itoa(i)
	}
	return t
}()

type encoder struct {
	w   sink
	num []byte
}

// encodeOutput writes c without validating it.
func encodeOutput(w sink, c *SealCommitPhase1Output) {
	e := &encoder{w: w, num: make([]byte, 0, 20)}
	e.s(`{"registered_proof":"`)
	e.s(c.RegisteredProof.String())
	e.s(`","vanilla_proofs":{"`)
	e.s(c.VanillaProofs.Key)
	e.s(`":[`)
	for k, part := range c.VanillaProofs.Partitions {
		if k > 0 {
			e.b(',')
		}
		e.b('[')
		for i := range part {
			if i > 0 {
				e.b(',')
			}
			e.proof(&part[i])
		}
		e.b(']')
	}
	e.s(`]},"comm_r":`)
	e.domain(&c.CommR)
	e.s(`,"comm_d":`)
	e.domain(&c.CommD)
	e.s(`,"replica_id":`)
	e.domain(&c.ReplicaID)
	e.s(`,"seed":`)
	e.domain(&c.Seed)
	e.s(`,"ticket":`)
	e.domain(&c.Ticket)
	e.b('}')
}

func (e *encoder) s(str string) { e.w.WriteString(str) }
func (e *encoder) b(c byte)     { e.w.WriteByte(c) }

func (e *encoder) uint(v uint64) {
	e.num = strconv.AppendUint(e.num[:0], v, 10)
	e.w.Write(e.num)
}

func (e *encoder) domain(d *[32]byte) {
	e.b('[')
	for i, x := range d {
		if i > 0 {
			e.b(',')
		}
		e.s(decimal[x])
	}
	e.b(']')
}

func (e *encoder) domains(ds [][32]byte) {
	e.b('[')
	for i := range ds {
		if i > 0 {
			e.b(',')
		}
		e.domain(&ds[i])
	}
	e.b(']')
}

func (e *encoder) proof(p *Proof) {
	e.s(`{"comm_d_proofs":`)
	e.merkle(&p.CommDProofs)
	e.s(`,"comm_r_last_proof":`)
	e.merkle(&p.CommRLastProof)
	e.s(`,"replica_column_proofs":{"c_x":`)
	e.columnProof(&p.ReplicaColumnProofs.CX)
	e.s(`,"drg_parents":`)
	e.columnProofs(p.ReplicaColumnProofs.DrgParents)
	e.s(`,"exp_parents":`)
	e.columnProofs(p.ReplicaColumnProofs.ExpParents)
	e.s(`},"labeling_proofs":[`)
	for i := range p.LabelingProofs {
		if i > 0 {
			e.b(',')
		}
		lp := &p.LabelingProofs[i]
		e.labeling(lp.Parents, lp.LayerIndex, lp.Node)
	}
	e.s(`],"encoding_proof":`)
	e.labeling(p.EncodingProof.Parents, p.EncodingProof.LayerIndex, p.EncodingProof.Node)
	e.b('}')
}

func (e *encoder) columnProofs(cps []ColumnProof) {
	e.b('[')
	for i := range cps {
		if i > 0 {
			e.b(',')
		}
		e.columnProof(&cps[i])
	}
	e.b(']')
}

func (e *encoder) columnProof(cp *ColumnProof) {
	e.s(`{"column":{"index":`)
	e.uint(uint64(cp.Column.Index))
	e.s(`,"rows":`)
	e.domains(cp.Column.Rows)
	e.s(`,"_h":null},"inclusion_proof":`)
	e.merkle(&cp.InclusionProof)
	e.b('}')
}

func (e *encoder) labeling(parents [][32]byte, layer uint32, node uint64) {
	e.s(`{"parents":`)
	e.domains(parents)
	e.s(`,"layer_index":`)
	e.uint(uint64(layer))
	e.s(`,"node":`)
	e.uint(node)
	e.b('}')
}

func (e *encoder) merkle(m *MerkleProof) {
	e.s(`{"data":{`)
	switch d := &m.Data; {
	case d.Single != nil:
		e.s(`"Single":{"root":`)
		e.domain(&d.Single.Root)
		e.s(`,"leaf":`)
		e.domain(&d.Single.Leaf)
		e.s(`,"path":`)
		e.path(&d.Single.Path)
		e.b('}')
	case d.Sub != nil:
		e.s(`"Sub":{"base_proof":`)
		e.path(&d.Sub.BaseProof)
		e.s(`,"sub_proof":`)
		e.path(&d.Sub.SubProof)
		e.s(`,"root":`)
		e.domain(&d.Sub.Root)
		e.s(`,"leaf":`)
		e.domain(&d.Sub.Leaf)
		e.b('}')
	case d.Top != nil:
		e.s(`"Top":{"base_proof":`)
		e.path(&d.Top.BaseProof)
		e.s(`,"sub_proof":`)
		e.path(&d.Top.SubProof)
		e.s(`,"top_proof":`)
		e.path(&d.Top.TopProof)
		e.s(`,"root":`)
		e.domain(&d.Top.Root)
		e.s(`,"leaf":`)
		e.domain(&d.Top.Leaf)
		e.b('}')
	}
	e.s(`}}`)
}

func (e *encoder) path(p *InclusionPath) {
	e.s(`{"path":[`)
	for i := range p.Path {
		if i > 0 {
			e.b(',')
		}
		e.s(`{"hashes":`)
		e.domains(p.Path[i].Hashes)
		e.s(`,"index":`)
		e.uint(p.Path[i].Index)
		e.b('}')
	}
	e.s(`]}`)
}
