// Package metrics records what clients see — latencies in HDR histograms,
// counts of transactions, failures and retries — in recorders that each
// client or shard of clients locks alone, merged once per interval.
package metrics

import (
	"fmt"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Latency histograms hold microseconds from 1 µs to one hour with three
// significant figures: every latency below 2.048 ms is exact to the
// microsecond, larger ones are within 0.1 %.
const (
	LowestUS  = 1
	HighestUS = 3600 * 1_000_000
	SigFigs   = 3
)

// NewHistogram returns an empty latency histogram with pgscale's geometry.
func NewHistogram() *hdr.Histogram { return hdr.New(LowestUS, HighestUS, SigFigs) }

// RecordUS records one latency in microseconds, clamping to the histogram's
// range (a latency of more than an hour is recorded as one hour).
func RecordUS(h *hdr.Histogram, us int64) {
	if us < LowestUS {
		us = LowestUS
	} else if us > HighestUS {
		us = HighestUS
	}
	_ = h.RecordValue(us) // cannot fail inside the range
}

// EncodeHistogram returns the standard HdrHistogram V2 compressed, base64
// encoding: exact, and mergeable by any HdrHistogram implementation.
func EncodeHistogram(h *hdr.Histogram) (string, error) {
	b, err := h.Encode(hdr.V2CompressedEncodingCookieBase)
	return string(b), err
}

// DecodeHistogram reverses EncodeHistogram.
func DecodeHistogram(s string) (*hdr.Histogram, error) {
	h, err := hdr.Decode([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("decode latency histogram: %w", err)
	}
	return h, nil
}
