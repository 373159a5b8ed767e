package result

// Disturbance is one disturbance window run during a step and what it did.
type Disturbance struct{}
