package c1

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/internal/clip"
)

// Artifact is a decoded C1 input: the C1, and the Commit2In wrapper's
// fields when the input was wrapped.
type Artifact struct {
	// C1 is the decoded artifact; it has passed Validate.
	C1 *SealCommitPhase1Output
	// Wrapped reports whether the input was a Commit2In wrapper.
	Wrapped bool
	// SectorNum and SectorSize are the wrapper's fields (zero if raw).
	// SectorSize has been checked against the registered proof.
	SectorNum  int64
	SectorSize uint64
}

// Option configures decoding.
type Option func(*config)

type config struct {
	expect    proofs.RegisteredSealProof
	hasExpect bool
	maxBytes  int64 // 0: the registered proof's MaxSize
}

// WithProof requires the artifact to be of registered proof p (else an
// error wrapping ErrProofMismatch) and bounds the input by p's MaxSize
// from the first byte.
func WithProof(p proofs.RegisteredSealProof) Option {
	return func(c *config) { c.expect, c.hasExpect = p, true }
}

// WithMaxBytes replaces the size bound on the C1 JSON with n bytes (a
// Commit2In wrapper may be 4/3 of that plus 256 bytes).
func WithMaxBytes(n int64) Option {
	return func(c *config) { c.maxBytes = n }
}

func newConfig(opts []Option) (*config, error) {
	cfg := &config{}
	for _, o := range opts {
		o(cfg)
	}
	if cfg.hasExpect {
		if _, err := proofs.Lookup(cfg.expect); err != nil {
			return nil, fmt.Errorf("c1: decode: expected proof: %w", err)
		}
	}
	if cfg.maxBytes < 0 {
		return nil, fmt.Errorf("c1: decode: negative size bound %d", cfg.maxBytes)
	}
	return cfg, nil
}

// limit is the bound on the C1 JSON before the registered proof is read.
func (c *config) limit() int64 {
	switch {
	case c.maxBytes > 0:
		return c.maxBytes
	case c.hasExpect:
		n, _ := MaxSize(c.expect)
		return n
	}
	return maxAnySize()
}

// Decode reads a C1 artifact from r: either the SealCommitPhase1Output
// JSON as filecoin-ffi writes it, or a Commit2In wrapper holding it in
// base64, told apart by the first key of the top-level object. It streams:
// memory use is bounded by the decoded artifact, not the input. The input
// is refused, before parsing when its length is known (r has a Len
// method) and otherwise as soon as it is exceeded, when larger than the
// bound (WithMaxBytes, or the MaxSize of the expected or, once read, the
// registered proof). Decoding is strict: unknown, duplicate or missing
// fields, wrong types, counts or variants, out-of-range integers and
// non-canonical domains are errors; so is anything after the artifact but
// whitespace. Errors are *Error values naming the JSON path.
func Decode(r io.Reader, opts ...Option) (*Artifact, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	rawLimit := cfg.limit()
	known := int64(-1)
	if l, ok := r.(interface{ Len() int }); ok {
		if known = int64(l.Len()); known > wrappedSize(rawLimit) {
			return nil, &Error{Offset: -1, Err: fmt.Errorf("%w: %d bytes, bound %d", ErrTooLarge, known, wrappedSize(rawLimit))}
		}
	}
	outer := &limitReader{r: r, limit: wrappedSize(rawLimit)}
	br := bufio.NewReaderSize(outer, sniffSize)
	if !sniffWrapped(br) {
		outer.limit = rawLimit
		if known > rawLimit {
			return nil, &Error{Offset: -1, Err: fmt.Errorf("%w: %d bytes, bound %d", ErrTooLarge, known, rawLimit)}
		}
		if outer.n > rawLimit { // sniffing may have read it all
			return nil, &Error{Offset: -1, Err: outer.tooLarge()}
		}
		c, err := decodeRaw(br, outer, cfg, "")
		if err != nil {
			return nil, err
		}
		return &Artifact{C1: c}, nil
	}
	return decodeWrapped(br, cfg, rawLimit)
}

// DecodeBytes is Decode over b.
func DecodeBytes(b []byte, opts ...Option) (*Artifact, error) {
	return Decode(bytes.NewReader(b), opts...)
}

// DecodeFile is Decode over the named file, refusing it by its size
// before reading when it exceeds the bound.
func DecodeFile(name string, opts ...Option) (*Artifact, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("c1: decode file: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("c1: decode file: %w", err)
	}
	if bound := wrappedSize(cfg.limit()); st.Mode().IsRegular() && st.Size() > bound {
		return nil, &Error{Offset: -1, Err: fmt.Errorf("%w: %s has %d bytes, bound %d", ErrTooLarge, name, st.Size(), bound)}
	}
	a, err := Decode(f, opts...)
	if err != nil {
		return nil, fmt.Errorf("c1: decode file %s: %w", name, err)
	}
	return a, nil
}

// Unmarshal decodes b as a raw (unwrapped) C1; see Decode.
func Unmarshal(b []byte, opts ...Option) (*SealCommitPhase1Output, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	if n := int64(len(b)); n > cfg.limit() {
		return nil, &Error{Offset: -1, Err: fmt.Errorf("%w: %d bytes, bound %d", ErrTooLarge, n, cfg.limit())}
	}
	lim := &limitReader{r: bytes.NewReader(b), limit: cfg.limit()}
	return decodeRaw(lim, lim, cfg, "")
}

// limitReader fails with ErrTooLarge once more than limit bytes have been
// read; the limit may be lowered while reading.
type limitReader struct {
	r        io.Reader
	n, limit int64
}

func (l *limitReader) tooLarge() error {
	return fmt.Errorf("%w: more than %d bytes", ErrTooLarge, l.limit)
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.n > l.limit {
		return 0, l.tooLarge()
	}
	if rem := l.limit + 1 - l.n; int64(len(p)) > rem {
		p = p[:rem]
	}
	k, err := l.r.Read(p)
	l.n += int64(k)
	if l.n > l.limit {
		return k, l.tooLarge()
	}
	return k, err
}

// Field names, in Rust declaration order.
var (
	outputFields   = []string{"registered_proof", "vanilla_proofs", "comm_r", "comm_d", "replica_id", "seed", "ticket"}
	proofFields    = []string{"comm_d_proofs", "comm_r_last_proof", "replica_column_proofs", "labeling_proofs", "encoding_proof"}
	rcpFields      = []string{"c_x", "drg_parents", "exp_parents"}
	colProofFields = []string{"column", "inclusion_proof"}
	columnFields   = []string{"index", "rows", "_h"}
	labelFields    = []string{"parents", "layer_index", "node"}
	merkleFields   = []string{"data"}
	dataVariants   = []string{"Single", "Sub", "Top"}
	singleFields   = []string{"root", "leaf", "path"}
	subFields      = []string{"base_proof", "sub_proof", "root", "leaf"}
	topFields      = []string{"base_proof", "sub_proof", "top_proof", "root", "leaf"}
	pathFields     = []string{"path"}
	elementFields  = []string{"hashes", "index"}
	// vanillaKeys are the VanillaSealProof variants.
	vanillaKeys = func() []string {
		var ks []string
		for _, info := range proofs.All() {
			if !slices.Contains(ks, info.VanillaProofsKey) {
				ks = append(ks, info.VanillaProofsKey)
			}
		}
		return ks
	}()
)

// decoder is the strict streaming parser of one C1 JSON value.
type decoder struct {
	dec    *json.Decoder
	lim    *limitReader // the bound on the C1 JSON, lowered once the proof is known
	cfg    *config
	prefix string // "Phase1Out" inside a wrapper
	path   jpath
	raw    json.RawMessage
	s      *shape // the layout in force, once known
	sFrom  string // what fixed s, for messages
	reg    *proofs.SealProofInfo
}

func decodeRaw(r io.Reader, lim *limitReader, cfg *config, prefix string) (*SealCommitPhase1Output, error) {
	d := &decoder{dec: json.NewDecoder(r), lim: lim, cfg: cfg, prefix: prefix, path: make(jpath, 0, 16)}
	d.dec.UseNumber()
	if cfg.hasExpect {
		info, _ := proofs.Lookup(cfg.expect)
		d.s, d.sFrom = shapeOf(info), "the expected proof "+info.Name
	}
	c := new(SealCommitPhase1Output)
	err := d.object(outputFields, "SealCommitPhase1Output", func(i int) error {
		switch i {
		case 0:
			return d.registeredProof(c)
		case 1:
			return d.vanillaProofs(&c.VanillaProofs)
		case 2:
			return d.domain(&c.CommR)
		case 3:
			return d.domain(&c.CommD)
		case 4:
			return d.domain(&c.ReplicaID)
		case 5:
			return d.domain(&c.Seed)
		default:
			return d.domain(&c.Ticket)
		}
	})
	if err != nil {
		return nil, err
	}
	switch t, err := d.dec.Token(); {
	case err == io.EOF:
	case err != nil:
		return nil, d.wrapErr(err)
	default:
		return nil, d.fail(ErrSyntax, "%s after the C1 object", describe(t))
	}
	if err := Validate(c); err != nil {
		var e *Error
		if errors.As(err, &e) {
			e.Path = joinPath(prefix, e.Path)
		}
		return nil, err
	}
	return c, nil
}

func joinPath(prefix, p string) string {
	switch {
	case prefix == "":
		return p
	case p == "":
		return prefix
	}
	return prefix + "." + p
}

// fail returns an *Error of the given kind at the current path.
func (d *decoder) fail(kind error, format string, args ...any) error {
	return &Error{
		Path:   joinPath(d.prefix, d.path.String()),
		Offset: d.dec.InputOffset(),
		Err:    fmt.Errorf("%w: "+format, append([]any{kind}, args...)...),
	}
}

// wrapErr turns an error from encoding/json or the reader into an *Error.
func (d *decoder) wrapErr(err error) error {
	var e *Error
	var se *json.SyntaxError
	var pe *phase1Error
	switch {
	case errors.As(err, &e):
		return err
	case errors.Is(err, ErrTooLarge):
		return &Error{Path: joinPath(d.prefix, d.path.String()), Offset: d.dec.InputOffset(), Err: err}
	case errors.As(err, &pe):
		return pe.toError()
	case err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF):
		return d.fail(ErrSyntax, "unexpected end of input")
	case errors.As(err, &se):
		return &Error{Path: joinPath(d.prefix, d.path.String()), Offset: se.Offset, Err: fmt.Errorf("%w: %v", ErrSyntax, se)}
	}
	return &Error{Path: joinPath(d.prefix, d.path.String()), Offset: d.dec.InputOffset(), Err: fmt.Errorf("read: %w", err)}
}

func (d *decoder) token() (json.Token, error) {
	t, err := d.dec.Token()
	if err != nil {
		return nil, d.wrapErr(err)
	}
	return t, nil
}

// describe names a token's JSON type for messages.
func describe(t json.Token) string {
	switch v := t.(type) {
	case json.Delim:
		switch v {
		case '{':
			return "an object"
		case '[':
			return "an array"
		}
		return "the end of an array or object"
	case string:
		return "a string"
	case json.Number, float64:
		return "a number"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", t)
}

// describeRaw names the JSON type of a raw value.
func describeRaw(b []byte) string {
	switch b = bytes.TrimLeft(b, " \t\r\n"); {
	case len(b) == 0:
		return "nothing"
	case b[0] == '{':
		return "an object"
	case b[0] == '[':
		return "an array"
	case b[0] == '"':
		return "a string"
	case b[0] == 'n':
		return "null"
	case b[0] == 't' || b[0] == 'f':
		return "a boolean"
	}
	return "a number"
}

func (d *decoder) delim(want json.Delim, what string) error {
	t, err := d.token()
	if err != nil {
		return err
	}
	if t != want {
		return d.fail(ErrType, "got %s, want %s", describe(t), what)
	}
	return nil
}

// object parses an object whose fields must be exactly fields, each once,
// in any order, calling value with each field's index.
func (d *decoder) object(fields []string, typ string, value func(i int) error) error {
	if err := d.delim('{', "a "+typ+" object"); err != nil {
		return err
	}
	var seen uint32
	for d.dec.More() {
		t, err := d.token()
		if err != nil {
			return err
		}
		k, _ := t.(string)
		i := slices.Index(fields, k)
		d.path.key(clip.Head(k, 64))
		if i < 0 {
			return d.fail(ErrUnknownField, "%s has fields %s", typ, strings.Join(fields, ", "))
		}
		if seen&(1<<i) != 0 {
			return d.fail(ErrDuplicateField, "%q appears twice in %s", k, typ)
		}
		seen |= 1 << i
		if err := value(i); err != nil {
			return err
		}
		d.path.pop()
	}
	if _, err := d.token(); err != nil {
		return err
	}
	for i, f := range fields {
		if seen&(1<<i) == 0 {
			d.path.key(f)
			return d.fail(ErrMissingField, "%s lacks %q", typ, f)
		}
	}
	return nil
}

// variant parses an externally tagged enum value {"Variant": value}.
func (d *decoder) variant(names []string, typ string, value func(i int) error) error {
	if err := d.delim('{', "a "+typ+" (an object with one variant key: "+strings.Join(names, ", ")+")"); err != nil {
		return err
	}
	if !d.dec.More() {
		return d.fail(ErrVariant, "empty %s object, want one of %s", typ, strings.Join(names, ", "))
	}
	t, err := d.token()
	if err != nil {
		return err
	}
	k, _ := t.(string)
	i := slices.Index(names, k)
	d.path.key(clip.Head(k, 64))
	if i < 0 {
		return d.fail(ErrVariant, "unknown %s variant, want one of %s", typ, strings.Join(names, ", "))
	}
	if err := value(i); err != nil {
		return err
	}
	d.path.pop()
	if d.dec.More() {
		t, err := d.token()
		if err != nil {
			return err
		}
		k, _ := t.(string)
		d.path.key(clip.Head(k, 64))
		return d.fail(ErrVariant, "a second %s variant; an enum holds exactly one", typ)
	}
	_, err = d.token()
	return err
}

// array parses an array of at most max elements.
func (d *decoder) array(max int, what string, elem func(i int) error) error {
	if err := d.delim('[', "an array of "+what); err != nil {
		return err
	}
	for i := 0; d.dec.More(); i++ {
		d.path.index(i)
		if i >= max {
			return d.fail(ErrCount, "more than %d %s (%s)", max, what, d.sFrom)
		}
		if err := elem(i); err != nil {
			return err
		}
		d.path.pop()
	}
	_, err := d.token()
	return err
}

// next reads the next value into d.raw.
func (d *decoder) next() ([]byte, error) {
	if err := d.dec.Decode(&d.raw); err != nil {
		return nil, d.wrapErr(err)
	}
	return d.raw, nil
}

// domain parses an array of exactly 32 integers 0 to 255.
func (d *decoder) domain(dst *[32]byte) error {
	b, err := d.next()
	if err != nil {
		return err
	}
	if b[0] != '[' {
		return d.fail(ErrType, "got %s, want an array of 32 bytes", describeRaw(b))
	}
	n, i := 0, 1
	for {
		i = skipSpace(b, i)
		if b[i] == ']' {
			break
		}
		if n >= 32 {
			return d.fail(ErrCount, "more than 32 bytes")
		}
		var v uint64
		var err error
		d.path.index(n)
		v, i, err = d.parseUint(b, i, 255, "byte")
		if err != nil {
			return err
		}
		d.path.pop()
		dst[n] = byte(v)
		n++
		i = skipSpace(b, i)
		if b[i] == ',' {
			i++
		}
	}
	if n != 32 {
		return d.fail(ErrCount, "%d bytes, want 32", n)
	}
	return nil
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// parseUint parses the JSON number at b[i:] (b is valid JSON) as an
// unsigned integer of at most max, returning it and the index after it.
func (d *decoder) parseUint(b []byte, i int, max uint64, what string) (uint64, int, error) {
	if b[i] == '-' {
		return 0, 0, d.fail(ErrRange, "negative number, want a %s (0 to %d)", what, max)
	}
	if b[i] < '0' || b[i] > '9' {
		return 0, 0, d.fail(ErrType, "got %s, want a %s", describeRaw(b[i:]), what)
	}
	var v uint64
	over := false
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		dv := uint64(b[i] - '0')
		if v > (max-dv)/10 {
			over = true
		}
		v = v*10 + dv
	}
	if i < len(b) && (b[i] == '.' || b[i] == 'e' || b[i] == 'E') {
		return 0, 0, d.fail(ErrType, "not an integer, want a %s", what)
	}
	if over {
		return 0, 0, d.fail(ErrRange, "exceeds %d, the largest %s", max, what)
	}
	return v, i, nil
}

// uint parses an unsigned integer of at most max.
func (d *decoder) uint(max uint64, what string) (uint64, error) {
	b, err := d.next()
	if err != nil {
		return 0, err
	}
	v, _, err := d.parseUint(b, 0, max, what)
	return v, err
}

// domains parses an array of at most max domains into *dst.
func (d *decoder) domains(dst *[][32]byte, max int, what string) error {
	*dst = make([][32]byte, 0, max)
	return d.array(max, what, func(int) error {
		*dst = append(*dst, [32]byte{})
		return d.domain(&(*dst)[len(*dst)-1])
	})
}

func (d *decoder) registeredProof(c *SealCommitPhase1Output) error {
	t, err := d.token()
	if err != nil {
		return err
	}
	name, ok := t.(string)
	if !ok {
		return d.fail(ErrType, "got %s, want the proof's name as a string", describe(t))
	}
	p, err := proofs.Parse(name)
	if err != nil {
		return &Error{Path: joinPath(d.prefix, d.path.String()), Offset: d.dec.InputOffset(), Err: err}
	}
	info, _ := proofs.Lookup(p)
	if d.cfg.hasExpect && p != d.cfg.expect {
		return d.fail(ErrProofMismatch, "%s, want %s", name, d.cfg.expect)
	}
	if d.s != nil && d.s.key != info.VanillaProofsKey {
		return d.fail(ErrProofMismatch, "%s stores its vanilla proofs under %q, but they are under %q", name, info.VanillaProofsKey, d.s.key)
	}
	c.RegisteredProof = p
	d.reg = &info
	d.s, d.sFrom = shapeOf(info), "registered_proof "+name
	if d.cfg.maxBytes == 0 {
		n, _ := MaxSize(p)
		d.lim.limit = min(d.lim.limit, n)
		if d.lim.n > d.lim.limit {
			return &Error{Path: joinPath(d.prefix, d.path.String()), Offset: d.dec.InputOffset(),
				Err: fmt.Errorf("%w: more than %d bytes, the bound for %s", ErrTooLarge, d.lim.limit, name)}
		}
	}
	return nil
}

func (d *decoder) vanillaProofs(v *VanillaSealProof) error {
	return d.variant(vanillaKeys, "VanillaSealProof", func(i int) error {
		key := vanillaKeys[i]
		if d.s != nil && d.s.key != key {
			return d.fail(ErrProofMismatch, "%s stores its vanilla proofs under %q, not %q", d.sFrom, d.s.key, key)
		}
		if d.s == nil {
			infos, _ := proofs.ByVanillaKey(key)
			d.s, d.sFrom = shapeOf(infos[0]), "vanilla_proofs key "+key
		}
		v.Key = key
		v.Partitions = make([][]Proof, 0, d.s.partitions)
		return d.array(d.s.partitions, "partitions", func(int) error {
			part := make([]Proof, 0, d.s.challenges)
			err := d.array(d.s.challenges, "challenge proofs", func(int) error {
				part = append(part, Proof{})
				return d.proof(&part[len(part)-1])
			})
			v.Partitions = append(v.Partitions, part)
			return err
		})
	})
}

func (d *decoder) proof(p *Proof) error {
	return d.object(proofFields, "Proof", func(i int) error {
		switch i {
		case 0:
			return d.merkle(&p.CommDProofs, proofs.TreeShape{Base: 2}, d.s.commD, 0, 0)
		case 1:
			return d.merkle(&p.CommRLastProof, d.s.tree, d.s.treeBase, d.s.treeSub, d.s.treeTop)
		case 2:
			return d.replicaColumnProof(&p.ReplicaColumnProofs)
		case 3:
			p.LabelingProofs = make([]LabelingProof, 0, d.s.layers)
			return d.array(d.s.layers, "labeling proofs", func(int) error {
				p.LabelingProofs = append(p.LabelingProofs, LabelingProof{})
				lp := &p.LabelingProofs[len(p.LabelingProofs)-1]
				return d.labeling("LabelingProof", &lp.Parents, &lp.LayerIndex, &lp.Node)
			})
		default:
			e := &p.EncodingProof
			return d.labeling("EncodingProof", &e.Parents, &e.LayerIndex, &e.Node)
		}
	})
}

func (d *decoder) replicaColumnProof(r *ReplicaColumnProof) error {
	return d.object(rcpFields, "ReplicaColumnProof", func(i int) error {
		switch i {
		case 0:
			return d.columnProof(&r.CX)
		case 1:
			return d.columnProofs(&r.DrgParents, proofs.DRGParents, "DRG parent column proofs")
		default:
			return d.columnProofs(&r.ExpParents, proofs.ExpParents, "expander parent column proofs")
		}
	})
}

func (d *decoder) columnProofs(dst *[]ColumnProof, max int, what string) error {
	*dst = make([]ColumnProof, 0, max)
	return d.array(max, what, func(int) error {
		*dst = append(*dst, ColumnProof{})
		return d.columnProof(&(*dst)[len(*dst)-1])
	})
}

func (d *decoder) columnProof(cp *ColumnProof) error {
	return d.object(colProofFields, "ColumnProof", func(i int) error {
		if i == 1 {
			return d.merkle(&cp.InclusionProof, d.s.tree, d.s.treeBase, d.s.treeSub, d.s.treeTop)
		}
		return d.object(columnFields, "Column", func(i int) error {
			switch i {
			case 0:
				v, err := d.uint(1<<32-1, "u32")
				cp.Column.Index = uint32(v)
				return err
			case 1:
				return d.domains(&cp.Column.Rows, d.s.layers, "rows (one per layer)")
			default:
				t, err := d.token()
				if err != nil {
					return err
				}
				if t != nil {
					return d.fail(ErrType, "got %s, want null (a PhantomData)", describe(t))
				}
				return nil
			}
		})
	})
}

func (d *decoder) labeling(typ string, parents *[][32]byte, layer *uint32, node *uint64) error {
	return d.object(labelFields, typ, func(i int) error {
		switch i {
		case 0:
			return d.domains(parents, proofs.TotalParents, "parent labels")
		case 1:
			v, err := d.uint(1<<32-1, "u32")
			*layer = uint32(v)
			return err
		default:
			v, err := d.uint(1<<64-1, "u64")
			*node = v
			return err
		}
	})
}

// merkle parses a MerkleProof of tree shape t, whose levels have at most
// base, sub and top path elements.
func (d *decoder) merkle(m *MerkleProof, t proofs.TreeShape, base, sub, top int) error {
	want := 0 // index into dataVariants
	switch {
	case t.Top > 0:
		want = 2
	case t.Sub > 0:
		want = 1
	}
	return d.object(merkleFields, "MerkleProof", func(int) error {
		return d.variant(dataVariants, "ProofData", func(i int) error {
			if i != want {
				return d.fail(ErrVariant, "%s, but a %s tree's proofs are %s", dataVariants[i], t, dataVariants[want])
			}
			switch i {
			case 0:
				p := &SingleProof{}
				m.Data.Single = p
				return d.object(singleFields, "SingleProof", func(i int) error {
					switch i {
					case 0:
						return d.domain(&p.Root)
					case 1:
						return d.domain(&p.Leaf)
					default:
						return d.inclusionPath(&p.Path, base, t.Base)
					}
				})
			case 1:
				p := &SubProof{}
				m.Data.Sub = p
				return d.object(subFields, "SubProof", func(i int) error {
					switch i {
					case 0:
						return d.inclusionPath(&p.BaseProof, base, t.Base)
					case 1:
						return d.inclusionPath(&p.SubProof, sub, t.Sub)
					case 2:
						return d.domain(&p.Root)
					default:
						return d.domain(&p.Leaf)
					}
				})
			default:
				p := &TopProof{}
				m.Data.Top = p
				return d.object(topFields, "TopProof", func(i int) error {
					switch i {
					case 0:
						return d.inclusionPath(&p.BaseProof, base, t.Base)
					case 1:
						return d.inclusionPath(&p.SubProof, sub, t.Sub)
					case 2:
						return d.inclusionPath(&p.TopProof, top, t.Top)
					case 3:
						return d.domain(&p.Root)
					default:
						return d.domain(&p.Leaf)
					}
				})
			}
		})
	})
}

func (d *decoder) inclusionPath(ip *InclusionPath, n, arity int) error {
	return d.object(pathFields, "InclusionPath", func(int) error {
		ip.Path = make([]PathElement, 0, n)
		return d.array(n, "path elements", func(int) error {
			ip.Path = append(ip.Path, PathElement{})
			el := &ip.Path[len(ip.Path)-1]
			return d.object(elementFields, "PathElement", func(i int) error {
				if i == 0 {
					return d.domains(&el.Hashes, arity-1, "sibling hashes")
				}
				v, err := d.uint(1<<64-1, "usize")
				el.Index = v
				return err
			})
		})
	})
}
