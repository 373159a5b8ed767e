// Package agent spreads a run's clients over several load-generator
// processes (agents, the pods of a Kubernetes Indexed Job) through a
// PostgreSQL coordination database: the coordinator writes each step's plan
// there, the agents connect their share of the clients and wait at a
// barrier, start together at an instant on the database server's clock,
// and send back per-interval HDR histograms and counts, which the
// coordinator adds into one ordinary step. It also prints the Indexed Job.
package agent
