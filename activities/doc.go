// Package activities is a worker host: the Temporal activities the
// workflows call by name (Host: validate, synthesize, device phase,
// finalize, store, release), the host's state beside them (the witness
// table, the memory budget and the slot supplier that rations syntheses by
// it, the spill of witnesses to another host) and the wiring that builds
// the host and registers its roles on their queues (worker.go, roles.go),
// the shape of Temporal's service/worker/batcher. cmd/worker is the
// process; package stack hosts the same in-process for dev, demo and tests.
package activities
