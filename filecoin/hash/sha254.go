package hash

import "crypto/sha256"

// Trim clears the two most significant bits of d (bits 6 and 7 of its last
// byte), as Sha256Domain::trim_to_fr32 does, and returns the result. The
// trimmed value read little-endian is below 2^254 and therefore always a
// canonical BLS12-381 scalar.
func Trim(d [32]byte) [32]byte {
	d[31] &= 0b0011_1111
	return d
}

// Sha254 returns SHA-256 of the concatenation of parts, trimmed to 254 bits
// (Sha256Function::hash and, for a list of nodes, Algorithm::multi_node).
func Sha254(parts ...[]byte) [32]byte {
	h := sha256.New()
	for _, p := range parts {
		h.Write(p)
	}
	var out [32]byte
	h.Sum(out[:0])
	return Trim(out)
}

// Sha254Node hashes two sibling nodes of a binary SHA254 tree into their
// parent: Trim(SHA-256(left || right)). This is the node function of tree D
// (Sha256Function's Algorithm::node and HashFunction::hash2).
func Sha254Node(left, right [32]byte) [32]byte {
	var buf [64]byte
	copy(buf[:32], left[:])
	copy(buf[32:], right[:])
	out := sha256.Sum256(buf[:])
	return Trim(out)
}

// Sha254Nodes hashes any number of sibling nodes into their parent:
// Trim(SHA-256(n0 || n1 || ...)) (Sha256Function's Algorithm::multi_node).
func Sha254Nodes(nodes [][32]byte) [32]byte {
	h := sha256.New()
	for i := range nodes {
		h.Write(nodes[i][:])
	}
	var out [32]byte
	h.Sum(out[:0])
	return Trim(out)
}
