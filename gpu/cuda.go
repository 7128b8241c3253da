//go:build cuda

package gpu

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/bits"
	"strings"
	"sync"
	"time"
	"unsafe"

	curve "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fp"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr/fft"
	icicle_core "github.com/ingonyama-zk/icicle-gnark/v3/wrappers/golang/core"
	icicle_bls "github.com/ingonyama-zk/icicle-gnark/v3/wrappers/golang/curves/bls12381"
	icicle_msm "github.com/ingonyama-zk/icicle-gnark/v3/wrappers/golang/curves/bls12381/msm"
	icicle_ntt "github.com/ingonyama-zk/icicle-gnark/v3/wrappers/golang/curves/bls12381/ntt"
	icicle_vecops "github.com/ingonyama-zk/icicle-gnark/v3/wrappers/golang/curves/bls12381/vecOps"
	icicle_runtime "github.com/ingonyama-zk/icicle-gnark/v3/wrappers/golang/runtime"
)

// HasCUDA reports whether this build has the CUDA backend.
const HasCUDA = true

// icicle loads its device backends once per process (the library's own
// global state), so this package does too.
var (
	loadOnce sync.Once
	loadErr  error
)

func loadICICLE() error {
	loadOnce.Do(func() {
		if e := icicle_runtime.LoadBackendFromEnvOrDefault(); e != icicle_runtime.Success {
			loadErr = fmt.Errorf("icicle: load backend (set ICICLE_BACKEND_INSTALL_DIR): %s", e.AsString())
		}
	})
	return loadErr
}

// CUDA is one GPU through icicle. Proving-key bases are uploaded once per
// device and kept (like cuzk's pinned SRS), keyed by the identity of the
// base slice, while they fit in the device memory the backend may use
// (WithDeviceMemory); a base set that does not fit is streamed: each MSM
// sends it in chunks that do, and adds the chunks' sums. Scalars and NTT
// vectors travel per call; Quotient keeps its two vectors on the device
// from a, b and c to H.
//
// At 32GiB a partition's G1 bases (A, B, K, H) are about 50 GB: resident
// on an H200, streamed on the 16-24 GB cards providers run. icicle-gnark's
// Go wrappers expose no host-memory pinning, so chunks go from pageable
// host memory (the driver stages them); pinning them is the next step
// where the wrapper allows it.
type CUDA struct {
	id     int
	typ    string // icicle's device type: DeviceCUDA, or DeviceCPU in tests
	device icicle_runtime.Device
	log    *slog.Logger
	mu     sync.Mutex
	bases  map[basesKey]*residentBases
	// tick orders the resident sets' uses, for eviction.
	tick uint64
	// streamed are the base sets that did not fit, logged once each;
	// refused those whose allocation the device refused, streamed from
	// then on.
	streamed, refused map[basesKey]bool
	domain            uint64 // size the NTT domain was initialised for
	// twiddles is what the NTT domain holds on the device: a root of unity
	// per element (icicle's domain for 2^27 is 4 GiB), counted beside the
	// bases so that a 2^27 domain is not left to the fixed margin.
	twiddles int64
	// limit is what the backend may hold on the device (bases resident
	// plus one call's working space); used is what resident bases hold,
	// working what running Quotients' vectors hold (they release c.mu
	// between steps, so an urgent holder's MSM must leave them room).
	limit, used, working int64
	// quotients are the domain sizes and paths (device or host) Quotient
	// has logged.
	quotients map[quotientPath]bool
	// stage is how many rows Quotient stages at a time; 0 is
	// quotientChunk (tests stage fewer).
	stage int
	// refuseAlloc, when set, refuses the allocations it names (tests:
	// icicle's CPU backend is never full).
	refuseAlloc func(what string) bool
	// minChunk is the streamed chunk's floor in points; 0 is
	// minChunkPoints (tests take fewer).
	minChunk int
	// evictIdle, when set, replaces the package's evictIdle (tests).
	evictIdle time.Duration
}

var _ Quotienter = (*CUDA)(nil)

type quotientPath struct {
	n        int
	onDevice bool
}

// deviceMargin is left free by the default cap: the CUDA context, icicle's
// MSM buckets and NTT twiddles, another process's allocations.
const deviceMargin = 2 << 30

// Sizes on the device: an affine G1 point is two 48-byte coordinates, a
// scalar 32 bytes.
const (
	g1AffineBytes = int64(unsafe.Sizeof(icicle_bls.Affine{}))
	scalarBytes   = int64(unsafe.Sizeof(icicle_bls.ScalarField{}))
)

type basesKey struct {
	first *curve.G1Affine
	n     int
}

func (cfg *cudaConfig) apply(opts []CUDAOption) error {
	for _, o := range opts {
		o(cfg)
	}
	if cfg.log == nil {
		cfg.log = slog.New(slog.DiscardHandler)
	}
	t, err := ParseDeviceType(cfg.deviceType)
	cfg.deviceType = t
	return err
}

// deviceName names an icicle device in logs and slots: "cuda/0" for a
// GPU, "icicle-cpu/0" for icicle's CPU backend (never to be mistaken for
// the gnark-crypto backend's "cpu/0").
func deviceName(typ string, id int) string {
	if typ == DeviceCUDA {
		return fmt.Sprintf("cuda/%d", id)
	}
	return fmt.Sprintf("icicle-%s/%d", strings.ToLower(typ), id)
}

// NewCUDA opens icicle device id, a GPU unless WithDeviceType says
// otherwise.
func NewCUDA(id int, opts ...CUDAOption) (*CUDA, error) {
	var cfg cudaConfig
	if err := cfg.apply(opts); err != nil {
		return nil, err
	}
	if err := loadICICLE(); err != nil {
		return nil, err
	}
	name := deviceName(cfg.deviceType, id)
	dev := icicle_runtime.CreateDevice(cfg.deviceType, id)
	if !icicle_runtime.IsDeviceAvailable(&dev) {
		return nil, fmt.Errorf("icicle device %s (type %s) is not available", name, cfg.deviceType)
	}
	c := &CUDA{id: id, typ: cfg.deviceType, device: dev, log: cfg.log.With("device", name),
		bases: map[basesKey]*residentBases{}, streamed: map[basesKey]bool{}, refused: map[basesKey]bool{}, quotients: map[quotientPath]bool{}, limit: cfg.deviceMemory}
	var free, total uint
	reported := true
	if err := c.run(func() error {
		m, e := icicle_runtime.GetAvailableMemory()
		switch {
		case e == icicle_runtime.ApiNotImplemented && c.typ != DeviceCUDA:
			reported = false // icicle's CPU backend has no device memory to report
		case e != icicle_runtime.Success:
			return ierr("available memory", e)
		default:
			free, total = m.Free, m.Total
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("icicle device %s: %w", name, err)
	}
	if !reported {
		if c.limit <= 0 {
			c.limit = UnreportedDeviceMemory
		}
		c.log.Info("device memory", "type", c.typ, "limit_bytes", c.limit, "free_unreported", true)
		return c, nil
	}
	if c.limit <= 0 {
		c.limit = int64(free) - deviceMargin
	}
	if c.limit <= 0 {
		return nil, fmt.Errorf("icicle device %s: %d bytes free, less than the %d-byte margin", name, free, deviceMargin)
	}
	c.log.Info("device memory", "type", c.typ, "limit_bytes", c.limit, "free_bytes", free, "total_bytes", total)
	return c, nil
}

// deviceCount is the number of visible icicle devices of type typ.
func deviceCount(typ string) (int, error) {
	if err := loadICICLE(); err != nil {
		return 0, err
	}
	dev := icicle_runtime.CreateDevice(typ, 0)
	if e := icicle_runtime.SetDevice(&dev); e != icicle_runtime.Success {
		return 0, fmt.Errorf("icicle device type %s: %s", typ, e.AsString())
	}
	n, e := icicle_runtime.GetDeviceCount()
	if e != icicle_runtime.Success {
		return 0, fmt.Errorf("icicle device type %s: device count: %s", typ, e.AsString())
	}
	return n, nil
}

// CUDASlots returns one slot per listed device (all visible if none) of
// the type WithDeviceType gives (CUDA by default).
func CUDASlots(ids []int, opts ...CUDAOption) (*Slots, error) {
	if len(ids) == 0 {
		var cfg cudaConfig
		if err := cfg.apply(opts); err != nil {
			return nil, err
		}
		n, err := deviceCount(cfg.deviceType)
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return nil, fmt.Errorf("icicle device type %s: no device visible", cfg.deviceType)
		}
		for i := 0; i < n; i++ {
			ids = append(ids, i)
		}
	}
	devs := make([]Backend, len(ids))
	for i, id := range ids {
		d, err := NewCUDA(id, opts...)
		if err != nil {
			return nil, err
		}
		devs[i] = d
	}
	return NewSlots(devs...), nil
}

// Name implements Backend.
func (c *CUDA) Name() string { return deviceName(c.typ, c.id) }

// run executes f on the device: icicle binds a device to an OS thread.
func (c *CUDA) run(f func() error) error {
	done := make(chan error, 1)
	icicle_runtime.RunOnDevice(&c.device, func(...any) { done <- f() })
	return <-done
}

// locked is run holding c.mu: one operation on the device at a time.
func (c *CUDA) locked(f func() error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.run(f)
}

// taken is the device memory the backend holds: resident bases, running
// Quotients' vectors and the NTT domain's twiddles.
func (c *CUDA) taken() int64 { return c.used + c.working + c.twiddles }

func ierr(what string, e icicle_runtime.EIcicleError) error {
	switch e {
	case icicle_runtime.Success:
		return nil
	case icicle_runtime.OutOfMemory, icicle_runtime.AllocationFailed:
		// The operation's own scratch (an MSM's buckets): the device
		// was full, not at fault.
		return &MemoryError{What: what, Err: fmt.Errorf("icicle: %s", e.AsString())}
	}
	return fmt.Errorf("icicle: %s: %s", what, e.AsString())
}

// memoryError completes a MemoryError of an operation on c with what c
// held; call it holding c.mu.
func (c *CUDA) memoryError(err error) error {
	var m *MemoryError
	if errors.As(err, &m) && m.Device == "" {
		m.Device, m.Resident, m.Working, m.Limit = c.Name(), c.used, c.working, c.limit
	}
	return err
}

// alloc allocates n elements of size bytes on the device, checked (icicle's
// CopyToDevice(dst, true) drops Malloc's error, and its next check then
// panics): a refusal is a MemoryError naming the size and what the
// backend holds. Call it on the device thread, holding c.mu.
func (c *CUDA) alloc(what string, size int64, n int) (icicle_core.DeviceSlice, error) {
	var d icicle_core.DeviceSlice
	e := icicle_runtime.AllocationFailed
	if c.refuseAlloc == nil || !c.refuseAlloc(what) {
		_, e = d.Malloc(int(size), n)
	}
	if e != icicle_runtime.Success {
		return icicle_core.DeviceSlice{}, c.memoryError(&MemoryError{What: what, Bytes: size * int64(n), Err: fmt.Errorf("icicle: %s", e.AsString())})
	}
	return d, nil
}

// upload copies host into the device slice dst, checked (icicle's
// HostSlice.CopyToDevice drops the copy's error). Call it on the device
// thread.
func upload[T any](what string, dst icicle_core.DeviceSlice, host []T) error {
	if len(host) == 0 {
		return nil
	}
	size := len(host) * int(unsafe.Sizeof(host[0]))
	if size > dst.Cap() {
		return fmt.Errorf("icicle: %s: %d bytes into a device slice of %d", what, size, dst.Cap())
	}
	_, e := icicle_runtime.CopyToDevice(dst.AsUnsafePointer(), unsafe.Pointer(unsafe.SliceData(host)), uint(size))
	return ierr(what, e)
}

// residentBases is a base set kept on the device.
type residentBases struct {
	d        icicle_core.DeviceSlice
	size     int64
	lastUsed uint64    // c.tick at its last use: the eviction order
	usedAt   time.Time // when: a set used within evictIdle is not evicted for another
}

// evictIdle is how long a resident set must have gone unused before
// another set takes its room: the sets of the circuit being proved (A, B,
// K and H, used one after the other) never evict each other, so a proof
// keeps what fits resident and streams the rest; a circuit not used for a
// while gives its room to the next.
const evictIdle = 30 * time.Second

// resident returns the device copy of a base slice, uploading it (and
// leaving Montgomery form) on first use; ok is false when the set does
// not fit beside running Quotients' vectors and one call's scalars even
// with the other resident sets evicted (least recently used first), and
// is then streamed (msmStreamed). A second circuit on the host so takes
// the room of the first instead of streaming point by point.
func (c *CUDA) resident(points []curve.G1Affine) (icicle_core.DeviceSlice, bool, error) {
	key := basesKey{&points[0], len(points)}
	c.tick++
	if r, ok := c.bases[key]; ok {
		r.lastUsed, r.usedAt = c.tick, time.Now()
		return r.d, true, nil
	}
	size := int64(len(points)) * g1AffineBytes
	need := size + int64(len(points))*scalarBytes
	if c.refused[key] {
		return icicle_core.DeviceSlice{}, false, nil
	}
	if c.working+need > c.limit {
		if !c.streamed[key] {
			c.streamed[key] = true
			c.log.Info("msm bases streamed in chunks (they do not fit the device memory limit)", "points", len(points), "bytes", size,
				"resident_bytes", c.used, "limit_bytes", c.limit, "chunk_points", c.chunkPoints())
		}
		return icicle_core.DeviceSlice{}, false, nil
	}
	if err := c.evictFor(need, c.idleAfter()); err != nil {
		return icicle_core.DeviceSlice{}, false, err
	}
	if c.taken()+need > c.limit {
		// The room is the sets of a circuit in use: streamed.
		if !c.streamed[key] {
			c.streamed[key] = true
			c.log.Info("msm bases streamed in chunks (they do not fit the device memory limit)", "points", len(points), "bytes", size,
				"resident_bytes", c.used, "limit_bytes", c.limit, "chunk_points", c.chunkPoints())
		}
		return icicle_core.DeviceSlice{}, false, nil
	}
	d, err := c.alloc("msm bases", g1AffineBytes, len(points))
	if err != nil {
		// Another process's allocations, or what icicle keeps: the set
		// is streamed from now on, as one that does not fit the limit.
		c.refused[key] = true
		c.log.Warn("msm bases streamed in chunks: the device refused their allocation", "points", len(points), "bytes", size, "err", err)
		return icicle_core.DeviceSlice{}, false, nil
	}
	if err := upload("msm bases", d, points); err != nil {
		d.Free()
		return icicle_core.DeviceSlice{}, false, err
	}
	if err := ierr("bases from Montgomery form", icicle_bls.AffineFromMontgomery(d)); err != nil {
		d.Free()
		return d, false, err
	}
	c.bases[key] = &residentBases{d: d, size: size, lastUsed: c.tick, usedAt: time.Now()}
	c.used += size
	c.log.Info("msm bases resident on the device", "points", len(points), "bytes", size, "resident_bytes", c.used, "limit_bytes", c.limit)
	return d, true, nil
}

// idleAfter is how long a set must have gone unused to be evicted for
// another (evictIdle; tests take less).
func (c *CUDA) idleAfter() time.Duration {
	if c.evictIdle > 0 {
		return c.evictIdle
	}
	return evictIdle
}

// evictFor frees resident base sets unused for at least idle, least
// recently used first, until need bytes fit beside the rest and the
// running Quotients' vectors (or no such set is left). Call it on the
// device thread, holding c.mu (no MSM is using a set then).
func (c *CUDA) evictFor(need int64, idle time.Duration) error {
	now := time.Now()
	for c.taken()+need > c.limit {
		var oldest basesKey
		var r *residentBases
		for k, b := range c.bases {
			if now.Sub(b.usedAt) >= idle && (r == nil || b.lastUsed < r.lastUsed) {
				oldest, r = k, b
			}
		}
		if r == nil {
			return nil
		}
		if err := ierr("free resident msm bases", r.d.Free()); err != nil {
			return err
		}
		delete(c.bases, oldest)
		c.used -= r.size
		c.log.Info("msm bases evicted from the device (least recently used) for another set", "points", oldest.n, "bytes", r.size, "resident_bytes", c.used)
	}
	return nil
}

// chunkPoints is how many points (with their scalars) one streamed chunk
// holds: what the limit leaves beside the resident bases and running
// Quotients' vectors.
func (c *CUDA) chunkPoints() int {
	return int(max((c.limit-c.taken())/(g1AffineBytes+scalarBytes), 1))
}

// minChunkPoints is the fewest points a streamed chunk should hold: below
// it, resident sets are evicted to make the room (an MSM of 130M points
// sent a few thousand at a time would crawl).
const minChunkPoints = 1 << 20

// msmStreamed is an MSM whose bases are not resident: icicle copies each
// chunk of host bases (Montgomery form, converted on the device) and
// scalars, and the chunks' sums are added on the host.
func (c *CUDA) msmStreamed(ctx context.Context, points []curve.G1Affine, scalars []fr.Element) (curve.G1Jac, error) {
	var acc curve.G1Jac
	minChunk := c.minChunk
	if minChunk <= 0 {
		minChunk = minChunkPoints
	}
	// Below the floor a chunk would crawl: any set gives its room.
	floor := int64(min(minChunk, len(points))) * (g1AffineBytes + scalarBytes)
	if err := c.evictFor(floor, 0); err != nil {
		return acc, err
	}
	step := c.chunkPoints()
	cfg := icicle_msm.GetDefaultMSMConfig()
	cfg.AreScalarsMontgomeryForm = true
	cfg.AreBasesMontgomeryForm = true
	out := make(icicle_core.HostSlice[icicle_bls.Projective], 1)
	for lo := 0; lo < len(points); lo += step {
		// No yield.Point here: the chunks run holding c.mu, which an
		// urgent phase's operations on this device need. The ordinary
		// holder yields before each operation (Slots.yield).
		if err := ctx.Err(); err != nil {
			return acc, err
		}
		hi := min(lo+step, len(points))
		if err := ierr("msm g1 (streamed chunk)", icicle_msm.Msm(icicle_core.HostSliceFromElements(scalars[lo:hi]),
			icicle_core.HostSliceFromElements(points[lo:hi]), &cfg, out)); err != nil {
			return acc, err
		}
		part := projectiveToJac(out[0])
		acc.AddAssign(&part)
	}
	return acc, nil
}

// MSMG1 implements Backend on the GPU.
func (c *CUDA) MSMG1(ctx context.Context, points []curve.G1Affine, scalars []fr.Element) (curve.G1Jac, error) {
	var res curve.G1Jac
	if err := ctx.Err(); err != nil {
		return res, err
	}
	if len(points) != len(scalars) {
		return res, fmt.Errorf("msm g1: %d points, %d scalars", len(points), len(scalars))
	}
	if len(points) == 0 {
		return res, nil // Z = 0: the point at infinity
	}
	err := c.locked(func() error {
		bases, ok, err := c.resident(points)
		if err != nil {
			return err
		}
		if !ok {
			res, err = c.msmStreamed(ctx, points, scalars)
			return err
		}
		cfg := icicle_msm.GetDefaultMSMConfig()
		cfg.AreScalarsMontgomeryForm = true
		out := make(icicle_core.HostSlice[icicle_bls.Projective], 1)
		if err := ierr("msm g1", icicle_msm.Msm(icicle_core.HostSliceFromElements(scalars), bases, &cfg, out)); err != nil {
			return err
		}
		res = projectiveToJac(out[0])
		return nil
	})
	return res, c.memoryErrorLocked(err)
}

// memoryErrorLocked is memoryError taking c.mu.
func (c *CUDA) memoryErrorLocked(err error) error {
	if err == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.memoryError(err)
}

// projectiveToJac converts icicle's projective (X/Z, Y/Z), standard form,
// little-endian limbs, to gnark's Jacobian.
func projectiveToJac(p icicle_bls.Projective) curve.G1Jac {
	px, _ := fp.LittleEndian.Element((*[fp.Bytes]byte)(p.X.ToBytesLittleEndian()))
	py, _ := fp.LittleEndian.Element((*[fp.Bytes]byte)(p.Y.ToBytesLittleEndian()))
	pz, _ := fp.LittleEndian.Element((*[fp.Bytes]byte)(p.Z.ToBytesLittleEndian()))
	var j curve.G1Jac
	if pz.IsZero() {
		return j
	}
	var zInv fp.Element
	zInv.Inverse(&pz)
	var a curve.G1Affine
	a.X.Mul(&px, &zInv)
	a.Y.Mul(&py, &zInv)
	j.FromAffine(&a)
	return j
}

// initDomain makes the device's NTT domain cover n points.
func (c *CUDA) initDomain(n uint64) error {
	if c.domain >= n {
		return nil
	}
	if c.domain > 0 {
		if err := ierr("release ntt domain", icicle_ntt.ReleaseDomain()); err != nil {
			return err
		}
		c.domain, c.twiddles = 0, 0
	}
	gen, err := fft.Generator(n)
	if err != nil {
		return err
	}
	bits := gen.Bits()
	var rou icicle_bls.ScalarField
	rou.FromLimbs(icicle_core.ConvertUint64ArrToUint32Arr(bits[:]))
	size := int64(n) * scalarBytes
	if err := c.evictFor(size, 0); err != nil {
		return err
	}
	if err := ierr("init ntt domain", icicle_ntt.InitDomain(rou, icicle_core.GetDefaultNTTInitDomainConfig())); err != nil {
		return c.memoryError(err)
	}
	c.domain, c.twiddles = n, size
	return nil
}

// nttKind is one of gnark's two transforms as icicle runs it.
type nttKind struct {
	name string
	dir  icicle_core.NTTDir
	ord  icicle_core.Ordering
}

// gnark's orderings: the inverse NTT takes natural order to bit-reversed
// (DIF), the forward NTT bit-reversed to natural (DIT).
var (
	inverseNTT = nttKind{"intt", icicle_core.KInverse, icicle_core.KNR}
	forwardNTT = nttKind{"ntt", icicle_core.KForward, icicle_core.KRN}
)

// transform runs k in place on a device vector out of Montgomery form,
// on the coset of FrMultiplicativeGen when coset is set. Call it on the
// device thread, holding c.mu.
func (c *CUDA) transform(d *fft.Domain, v icicle_core.DeviceSlice, k nttKind, coset bool) error {
	if err := c.initDomain(d.Cardinality); err != nil {
		return err
	}
	cfg := icicle_ntt.GetDefaultNttConfig()
	cfg.Ordering = k.ord
	if coset {
		// The prover divides by Z on the coset of FrMultiplicativeGen:
		// the device must use the same coset.
		bits := d.FrMultiplicativeGen.Bits()
		copy(cfg.CosetGen[:], icicle_core.ConvertUint64ArrToUint32Arr(bits[:]))
	}
	return ierr(k.name, icicle_ntt.Ntt(v, k.dir, &cfg, v))
}

// ntt runs one transform on the device with gnark's orderings: the vector
// goes up, leaves Montgomery form, is transformed, comes back.
func (c *CUDA) ntt(ctx context.Context, d *fft.Domain, v []fr.Element, k nttKind, coset bool) error {
	if err := checkNTT(ctx, d, v); err != nil {
		return err
	}
	var refused error
	err := c.locked(func() error {
		host := icicle_core.HostSliceFromElements(v)
		dev, err := c.alloc(k.name+" vector", scalarBytes, len(v))
		if err != nil {
			refused = err
			return nil
		}
		defer dev.Free()
		onDevice := coset
		if coset && k == forwardNTT && len(v) > maxDeviceForwardCoset {
			cosetBitReversed(v, d.FrMultiplicativeGen)
			onDevice = false
		}
		if err := upload(k.name+" vector", dev, v); err != nil {
			return err
		}
		if err := ierr(k.name+" input from Montgomery form", icicle_bls.FromMontgomery(dev)); err != nil {
			return err
		}
		if err := c.transform(d, dev, k, onDevice); err != nil {
			return err
		}
		if err := ierr(k.name+" output to Montgomery form", icicle_bls.ToMontgomery(dev)); err != nil {
			return err
		}
		host.CopyFromDevice(&dev)
		return nil
	})
	if err != nil || refused == nil {
		return c.memoryErrorLocked(err)
	}
	// No room for the vector: the host's FFT gives the same result
	// (gnark's orderings are the backend's), slower.
	c.log.Warn("ntt on the host: the device refused its vector", "kind", k.name, "elements", len(v), "err", refused)
	var cpu CPU
	if k == inverseNTT {
		return cpu.INTT(ctx, d, v, coset)
	}
	return cpu.NTT(ctx, d, v, coset)
}

// maxDeviceForwardCoset is the largest forward NTT icicle is given on a
// coset. Above 2^22, ICICLE v3.2.2's CPU backend multiplies the input by
// the coset's powers at the wrong positions (ntt_cpu.h, coset_mul's index
// remapping for logn > HIERARCHY_1, 22): every element of a 2^23 coset
// NTT of bit-reversed input differed from gnark's, and a 512MiB PoRep
// proof made over it did not verify. Whether the CUDA backend shares the
// fault is untested (no GPU here), so every device type takes the coset
// from the host above it (cosetBitReversed): n multiplications, and the
// device quotient leaves such domains to HostQuotient.
const maxDeviceForwardCoset = 1 << 22

// cosetBitReversed multiplies v, a polynomial's coefficients in
// bit-reversed order, by the powers of g: coefficient i, at position
// rev(i), by g^i. A plain forward NTT of the result is the NTT on the
// coset of g.
func cosetBitReversed(v []fr.Element, g fr.Element) {
	logN := bits.TrailingZeros(uint(len(v)))
	var w fr.Element
	w.SetOne()
	for i := range v {
		p := bits.Reverse64(uint64(i)) >> (64 - logN)
		v[p].Mul(&v[p], &w)
		w.Mul(&w, &g)
	}
}

// INTT implements Backend: natural order in, bit-reversed out (gnark's DIF).
func (c *CUDA) INTT(ctx context.Context, d *fft.Domain, v []fr.Element, coset bool) error {
	return c.ntt(ctx, d, v, inverseNTT, coset)
}

// NTT implements Backend: bit-reversed in, natural order out (gnark's DIT).
func (c *CUDA) NTT(ctx context.Context, d *fft.Domain, v []fr.Element, coset bool) error {
	return c.ntt(ctx, d, v, forwardNTT, coset)
}

// quotientChunk is how many rows of a, b or c the host stages at a time
// on their way to the device (32 MiB), whatever the domain.
const quotientChunk = 1 << 20

// Quotient implements Quotienter: a, b and c are evaluated a chunk at a
// time into a host staging buffer and copied to two device vectors
// (a's, then b's, their product kept in a's, c into b's), and every
// transform, the product and the difference run on the device; the host
// holds one chunk and H. Where the two vectors do not fit beside the
// resident bases it is HostQuotient over c's NTTs. c.mu is released
// between steps, evaluations included, so that an urgent holder's
// operations come between them.
func (c *CUDA) Quotient(ctx context.Context, d *fft.Domain, fill Fill) (h []fr.Element, err error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	n := int(d.Cardinality)
	size := 2 * int64(n) * scalarBytes
	c.mu.Lock()
	// Its forward NTTs are on a coset: above maxDeviceForwardCoset the
	// host applies the coset, between the device's transforms.
	onDevice := c.taken()+size <= c.limit && n <= maxDeviceForwardCoset
	if onDevice {
		c.working += size
	}
	c.logQuotient(n, size, onDevice)
	c.mu.Unlock()
	if !onDevice {
		return HostQuotient(ctx, c, d, fill)
	}

	var v [2]icicle_core.DeviceSlice
	defer func() {
		ferr := c.locked(func() error {
			c.working -= size
			return freeAll(v[:])
		})
		switch {
		case ferr == nil:
		case err == nil:
			h, err = nil, ferr
		default:
			// A device that cannot free is at fault whatever failed first.
			err = fmt.Errorf("%w (after: %v)", ferr, err)
		}
	}()
	var refused error
	if err := c.locked(func() error {
		for i := range v {
			d, err := c.alloc("quotient vector", scalarBytes, n)
			if err != nil {
				refused = err
				return nil
			}
			v[i] = d
		}
		return nil
	}); err != nil {
		return nil, err
	}
	if refused != nil {
		// The limit said they fit, the device did not: the host's
		// quotient over the device's NTTs, the vectors freed first.
		if err := c.locked(func() error {
			c.working -= size
			size = 0
			return freeAll(v[:])
		}); err != nil {
			return nil, err
		}
		v = [2]icicle_core.DeviceSlice{}
		c.log.Warn("quotient on the host: the device refused its vectors", "domain", n, "bytes", 2*int64(n)*scalarBytes, "err", refused)
		return HostQuotient(ctx, c, d, fill)
	}
	a, b := &v[0], &v[1]

	rows := c.stage
	if rows <= 0 {
		rows = quotientChunk
	}
	stage := make([]fr.Element, min(n, rows))
	// toCoset evaluates vector which into dst and brings it to the coset
	// as HostQuotient does: INTT, then NTT on the coset.
	toCoset := func(which int, dst *icicle_core.DeviceSlice) error {
		for lo := 0; lo < n; lo += len(stage) {
			if err := ctx.Err(); err != nil {
				return err
			}
			chunk := stage[:min(len(stage), n-lo)]
			if err := evaluate(fill, which, lo, chunk); err != nil {
				return err
			}
			if err := c.locked(func() error {
				return upload("quotient: staged rows", dst.Range(lo, lo+len(chunk), false), chunk)
			}); err != nil {
				return err
			}
		}
		return c.locked(func() error {
			if err := ierr(fmt.Sprintf("quotient: %c from Montgomery form", "abc"[which]), icicle_bls.FromMontgomery(*dst)); err != nil {
				return err
			}
			if err := c.transform(d, *dst, inverseNTT, false); err != nil {
				return fmt.Errorf("quotient: %c: %w", "abc"[which], err)
			}
			if err := c.transform(d, *dst, forwardNTT, true); err != nil {
				return fmt.Errorf("quotient: %c on the coset: %w", "abc"[which], err)
			}
			return nil
		})
	}
	vecOp := func(what string, op icicle_core.VecOps) error {
		return c.locked(func() error {
			return ierr("quotient: "+what, icicle_vecops.VecOp(*a, *b, *a, icicle_core.DefaultVecOpsConfig(), op))
		})
	}

	if err := toCoset(0, a); err != nil {
		return nil, err
	}
	if err := toCoset(1, b); err != nil {
		return nil, err
	}
	if err := vecOp("a·b", icicle_core.Mul); err != nil {
		return nil, err
	}
	if err := toCoset(2, b); err != nil {
		return nil, err
	}
	if err := vecOp("a·b − c", icicle_core.Sub); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	stage = nil // H takes its place on the host
	h = make([]fr.Element, n)
	if err := c.locked(func() error {
		if err := c.transform(d, *a, inverseNTT, true); err != nil {
			return fmt.Errorf("quotient: H from the coset: %w", err)
		}
		if err := ierr("quotient: H to Montgomery form", icicle_bls.ToMontgomery(*a)); err != nil {
			return err
		}
		icicle_core.HostSliceFromElements(h).CopyFromDevice(a)
		return nil
	}); err != nil {
		return nil, err
	}
	return h, nil
}

// logQuotient says once per domain size and path where Quotient runs.
// Call it holding c.mu.
func (c *CUDA) logQuotient(n int, size int64, onDevice bool) {
	k := quotientPath{n, onDevice}
	if c.quotients[k] {
		return
	}
	c.quotients[k] = true
	msg := "quotient on the device"
	switch {
	case onDevice:
	case n > maxDeviceForwardCoset:
		msg = "quotient on the host over the device's transforms (its domain is above 2^22: the host applies the coset)"
	default:
		msg = "quotient on the host (its two vectors do not fit the device memory limit)"
	}
	c.log.Info(msg, "domain", n, "bytes", size, "resident_bytes", c.used, "working_bytes", c.working, "limit_bytes", c.limit)
}

// freeAll frees the allocated device slices among v, on the device
// thread.
func freeAll(v []icicle_core.DeviceSlice) error {
	var errs []error
	for i := range v {
		if v[i].AsUnsafePointer() == nil {
			continue
		}
		if err := ierr("free a device vector", v[i].Free()); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Memory implements MemoryReporter.
func (c *CUDA) Memory() DeviceMemory {
	c.mu.Lock()
	defer c.mu.Unlock()
	return DeviceMemory{Limit: c.limit, Resident: c.used, ResidentSets: len(c.bases), Working: c.working, Twiddles: c.twiddles}
}
