// Package disturbtest runs pgscale's disturbance windows end to end: the
// real CLI, in-process, against one real ephemeral PostgreSQL cluster. It
// holds tests only.
package disturbtest
