package script

import (
	"math"
	"strconv"
)

const (
	minGaussianParam = 2.0
	minZipfianParam  = 1.001
	maxZipfianParam  = 1000.0
	maxFuncArgs      = 16
)

func coerceToBool(v value) (bool, error) {
	if v.t == tBool {
		return v.b, nil
	}
	return false, errorf("cannot coerce %s to boolean", v.typeName())
}

func coerceToInt(v value) (int64, error) {
	switch v.t {
	case tInt:
		return v.i, nil
	case tDouble:
		d := math.RoundToEven(v.d)
		if math.IsNaN(d) || !(d >= -9223372036854775808.0 && d < 9223372036854775808.0) {
			return 0, errorf("double to int overflow for %s", cFloat(d))
		}
		return int64(d), nil
	}
	return 0, errorf("cannot coerce %s to int", v.typeName())
}

func coerceToDouble(v value) (float64, error) {
	switch v.t {
	case tDouble:
		return v.d, nil
	case tInt:
		return float64(v.i), nil
	}
	return 0, errorf("cannot coerce %s to double", v.typeName())
}

// evalCtx carries what evaluation needs besides the client's variables.
type evalCtx struct {
	vmap    []int32 // script-local variable index -> client variable index
	script  int     // script index, for debug()
	command int     // command index, for debug()
}

// eval is pgbench's evaluateExpr.
func (c *Interp) eval(n *node, x *evalCtx) (value, error) {
	switch n.op {
	case opConst:
		return n.val, nil
	case opVar:
		v := &c.vars[x.vmap[n.vidx]]
		if !v.defined {
			return value{}, errorf("undefined variable \"%s\"", n.name)
		}
		if err := c.makeValue(v, x.vmap[n.vidx]); err != nil {
			return value{}, err
		}
		return v.val, nil
	case opAnd, opOr, opCase:
		return c.evalLazy(n.op, n.args, x)
	}
	return c.evalStandard(n, x)
}

func (c *Interp) evalLazy(op opcode, args []*node, x *evalCtx) (value, error) {
	a1, err := c.eval(args[0], x)
	if err != nil {
		return value{}, err
	}
	switch op {
	case opAnd, opOr:
		if a1.t == tNull {
			return nullValue(), nil
		}
		b1, err := coerceToBool(a1)
		if err != nil {
			return value{}, err
		}
		if op == opAnd && !b1 {
			return boolValue(false), nil
		}
		if op == opOr && b1 {
			return boolValue(true), nil
		}
		a2, err := c.eval(args[1], x)
		if err != nil {
			return value{}, err
		}
		if a2.t == tNull {
			return nullValue(), nil
		}
		b2, err := coerceToBool(a2)
		if err != nil {
			return value{}, err
		}
		return boolValue(b2), nil
	}
	// CASE: args are cond1, res1, cond2, res2, ..., else
	for {
		if a1.truth() {
			return c.eval(args[1], x)
		}
		args = args[2:]
		if len(args) == 1 {
			return c.eval(args[0], x)
		}
		a1, err = c.eval(args[0], x)
		if err != nil {
			return value{}, err
		}
	}
}

func (c *Interp) evalStandard(n *node, x *evalCtx) (value, error) {
	var vargs [maxFuncArgs]value
	if len(n.args) > maxFuncArgs {
		// pgbench evaluates the first 16 arguments, then gives up.
		for i := 0; i < maxFuncArgs; i++ {
			if _, err := c.eval(n.args[i], x); err != nil {
				return value{}, err
			}
		}
		return value{}, errorf("too many function arguments, maximum is %d", maxFuncArgs)
	}
	hasNull := false
	for i, a := range n.args {
		v, err := c.eval(a, x)
		if err != nil {
			return value{}, err
		}
		vargs[i] = v
		hasNull = hasNull || v.t == tNull
	}
	nargs := len(n.args)
	if hasNull && n.op != opIs && n.op != opDebug {
		return nullValue(), nil
	}
	switch n.op {
	case opAdd, opSub, opMul, opDiv, opMod, opEQ, opNE, opLE, opLT:
		l, r := vargs[0], vargs[1]
		if (l.t == tDouble || r.t == tDouble) && n.op != opMod {
			ld, err := coerceToDouble(l)
			if err != nil {
				return value{}, err
			}
			rd, err := coerceToDouble(r)
			if err != nil {
				return value{}, err
			}
			switch n.op {
			case opAdd:
				return doubleValue(ld + rd), nil
			case opSub:
				return doubleValue(ld - rd), nil
			case opMul:
				return doubleValue(ld * rd), nil
			case opDiv:
				return doubleValue(ld / rd), nil
			case opEQ:
				return boolValue(ld == rd), nil
			case opNE:
				return boolValue(ld != rd), nil
			case opLE:
				return boolValue(ld <= rd), nil
			default:
				return boolValue(ld < rd), nil
			}
		}
		li, err := coerceToInt(l)
		if err != nil {
			return value{}, err
		}
		ri, err := coerceToInt(r)
		if err != nil {
			return value{}, err
		}
		switch n.op {
		case opAdd:
			res := li + ri
			if (li >= 0) == (ri >= 0) && (res >= 0) != (li >= 0) {
				return value{}, errorf("bigint add out of range")
			}
			return intValue(res), nil
		case opSub:
			res := li - ri
			if (li >= 0) != (ri >= 0) && (res >= 0) != (li >= 0) {
				return value{}, errorf("bigint sub out of range")
			}
			return intValue(res), nil
		case opMul:
			res, ok := mulOverflow(li, ri)
			if !ok {
				return value{}, errorf("bigint mul out of range")
			}
			return intValue(res), nil
		case opEQ:
			return boolValue(li == ri), nil
		case opNE:
			return boolValue(li != ri), nil
		case opLE:
			return boolValue(li <= ri), nil
		case opLT:
			return boolValue(li < ri), nil
		}
		// division and modulo
		if ri == 0 {
			return value{}, errorf("division by zero")
		}
		if ri == -1 {
			if n.op == opDiv {
				if li == math.MinInt64 {
					return value{}, errorf("bigint div out of range")
				}
				return intValue(-li), nil
			}
			return intValue(0), nil
		}
		if n.op == opDiv {
			return intValue(li / ri), nil
		}
		return intValue(li % ri), nil

	case opBitAnd, opBitOr, opBitXor, opLShift, opRShift:
		li, err := coerceToInt(vargs[0])
		if err != nil {
			return value{}, err
		}
		ri, err := coerceToInt(vargs[1])
		if err != nil {
			return value{}, err
		}
		switch n.op {
		case opBitAnd:
			return intValue(li & ri), nil
		case opBitOr:
			return intValue(li | ri), nil
		case opBitXor:
			return intValue(li ^ ri), nil
		case opLShift:
			// x86-64 masks the shift count to 6 bits.
			return intValue(li << (uint64(ri) & 63)), nil
		default:
			return intValue(li >> (uint64(ri) & 63)), nil
		}

	case opNot:
		b, err := coerceToBool(vargs[0])
		if err != nil {
			return value{}, err
		}
		return boolValue(!b), nil

	case opPi:
		return doubleValue(math.Pi), nil

	case opAbs:
		v := vargs[0]
		if v.t == tInt {
			if v.i < 0 {
				return intValue(-v.i), nil
			}
			return v, nil
		}
		if v.t == tDouble {
			if v.d < 0 {
				return doubleValue(-v.d), nil
			}
			return v, nil
		}
		// pgbench reads a boolean's union as a double here; mimic it.
		return doubleValue(0), nil

	case opDebug:
		c.debug(vargs[0], x)
		return vargs[0], nil

	case opDouble, opSqrt, opLn, opExp:
		d, err := coerceToDouble(vargs[0])
		if err != nil {
			return value{}, err
		}
		switch n.op {
		case opSqrt:
			d = math.Sqrt(d)
		case opLn:
			d = cLog(d)
		case opExp:
			d = math.Exp(d)
		}
		return doubleValue(d), nil

	case opInt:
		i, err := coerceToInt(vargs[0])
		if err != nil {
			return value{}, err
		}
		return intValue(i), nil

	case opLeast, opGreatest:
		haveDouble := false
		for i := 0; i < nargs; i++ {
			if vargs[i].t == tDouble {
				haveDouble = true
				break
			}
		}
		if haveDouble {
			ext, err := coerceToDouble(vargs[0])
			if err != nil {
				return value{}, err
			}
			for i := 1; i < nargs; i++ {
				d, err := coerceToDouble(vargs[i])
				if err != nil {
					return value{}, err
				}
				if n.op == opLeast {
					if !(ext < d) {
						ext = d
					}
				} else if !(ext > d) {
					ext = d
				}
			}
			return doubleValue(ext), nil
		}
		ext, err := coerceToInt(vargs[0])
		if err != nil {
			return value{}, err
		}
		for i := 1; i < nargs; i++ {
			v, err := coerceToInt(vargs[i])
			if err != nil {
				return value{}, err
			}
			if n.op == opLeast {
				ext = min(ext, v)
			} else {
				ext = max(ext, v)
			}
		}
		return intValue(ext), nil

	case opRandom, opRandomExponential, opRandomGaussian, opRandomZipfian:
		imin, err := coerceToInt(vargs[0])
		if err != nil {
			return value{}, err
		}
		imax, err := coerceToInt(vargs[1])
		if err != nil {
			return value{}, err
		}
		if imin > imax {
			return value{}, errorf("empty range given to random")
		}
		delta := imax - imin
		if (imax >= 0) != (imin >= 0) && (delta >= 0) != (imax >= 0) || delta == math.MaxInt64 {
			return value{}, errorf("random range is too large")
		}
		if n.op == opRandom {
			return intValue(getrand(&c.rs, imin, imax)), nil
		}
		param, err := coerceToDouble(vargs[2])
		if err != nil {
			return value{}, err
		}
		switch n.op {
		case opRandomGaussian:
			if param < minGaussianParam {
				return value{}, errorf("gaussian parameter must be at least %s (not %s)", cFloat(minGaussianParam), cFloat(param))
			}
			return intValue(getGaussianRand(&c.rs, imin, imax, param)), nil
		case opRandomZipfian:
			if param < minZipfianParam || param > maxZipfianParam {
				return value{}, errorf("zipfian parameter must be in range [%.3f, %.0f] (not %s)", minZipfianParam, maxZipfianParam, cFloat(param))
			}
			return intValue(getZipfianRand(&c.rs, imin, imax, param)), nil
		default:
			if param <= 0.0 {
				return value{}, errorf("exponential parameter must be greater than zero (not %s)", cFloat(param))
			}
			return intValue(getExponentialRand(&c.rs, imin, imax, param)), nil
		}

	case opPow:
		ld, err := coerceToDouble(vargs[0])
		if err != nil {
			return value{}, err
		}
		rd, err := coerceToDouble(vargs[1])
		if err != nil {
			return value{}, err
		}
		return doubleValue(math.Pow(ld, rd)), nil

	case opIs:
		a, b := vargs[0], vargs[1]
		// pgbench compares the types and the union's first byte.
		return boolValue(a.t == b.t && unionByte(a) == unionByte(b)), nil

	case opHashMurmur2, opHashFNV1a:
		val, err := coerceToInt(vargs[0])
		if err != nil {
			return value{}, err
		}
		seed, err := coerceToInt(vargs[1])
		if err != nil {
			return value{}, err
		}
		if n.op == opHashMurmur2 {
			return intValue(hashMurmur2(val, uint64(seed))), nil
		}
		return intValue(hashFNV1a(val, uint64(seed))), nil

	case opPermute:
		val, err := coerceToInt(vargs[0])
		if err != nil {
			return value{}, err
		}
		size, err := coerceToInt(vargs[1])
		if err != nil {
			return value{}, err
		}
		seed, err := coerceToInt(vargs[2])
		if err != nil {
			return value{}, err
		}
		if size <= 0 {
			return value{}, errorf("permute size parameter must be greater than zero")
		}
		return intValue(permute(val, size, seed)), nil
	}
	return value{}, errorf("unexpected function %s", opName(n.op))
}

// unionByte is the low byte of pgbench's value union, as read through u.bval.
func unionByte(v value) byte {
	switch v.t {
	case tBool:
		if v.b {
			return 1
		}
		return 0
	case tInt:
		return byte(v.i)
	case tDouble:
		return byte(math.Float64bits(v.d))
	}
	return 0
}

func mulOverflow(a, b int64) (int64, bool) {
	if a == 0 || b == 0 {
		return 0, true
	}
	r := a * b
	if (a == -1 && b == math.MinInt64) || (b == -1 && a == math.MinInt64) || r/b != a {
		return 0, false
	}
	return r, true
}

// cLog is glibc's log: like math.Log, but a negative argument gives -nan.
func cLog(d float64) float64 {
	if d < 0 {
		return math.Copysign(math.NaN(), -1)
	}
	return math.Log(d)
}

func (c *Interp) debug(v value, x *evalCtx) {
	w := c.p.opts.DebugOutput
	if w == nil {
		return
	}
	b := c.scratch[:0]
	b = append(b, "debug(script="...)
	b = strconv.AppendInt(b, int64(x.script), 10)
	b = append(b, ",command="...)
	b = strconv.AppendInt(b, int64(x.command+1), 10)
	b = append(b, "): "...)
	switch v.t {
	case tNull:
		b = append(b, "null"...)
	case tBool:
		b = append(b, "boolean "...)
		b = v.appendText(b)
	case tInt:
		b = append(b, "int "...)
		b = v.appendText(b)
	case tDouble:
		b = append(b, "double "...)
		b = v.appendText(b)
	}
	b = append(b, '\n')
	_, _ = w.Write(b)
	c.scratch = b[:0]
}
