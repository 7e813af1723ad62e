// Tick arithmetic of the clock stage: 64-bit integers on vec2<u32>, and the conversions between
// seconds (f32) and ticks. CPU mirror: cpu::ticks.

#define_import_path wgpu_anim::ticks

#import wgpu_anim::types::{TICK_BITS, TICK_LIMIT_HI, Ticks}

// Clock times are fixed point (Rust: layout::Ticks): a signed 64-bit count of 2^-40 s, held
// here as vec2<u32>(low, high) in two's complement. Only integer operations touch it, so no
// compiler may reorder, contract or drop a step: the CPU mirror gets the same bits. f32 serves
// only to estimate a quotient that integer steps then correct.

fn i64_add(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    let lo = a.x + b.x;
    return vec2<u32>(lo, a.y + b.y + select(0u, 1u, lo < a.x));
}

fn i64_neg(a: vec2<u32>) -> vec2<u32> {
    return i64_add(~a, vec2<u32>(1u, 0u));
}

fn i64_less(a: vec2<u32>, b: vec2<u32>) -> bool {
    let ah = bitcast<i32>(a.y);
    let bh = bitcast<i32>(b.y);
    return ah < bh || (ah == bh && a.x < b.x);
}

fn i64_negative(a: vec2<u32>) -> bool {
    return bitcast<i32>(a.y) < 0;
}

fn i64_clamp(a: vec2<u32>, lo: vec2<u32>, hi: vec2<u32>) -> vec2<u32> {
    if (i64_less(a, lo)) {
        return lo;
    }
    if (i64_less(hi, a)) {
        return hi;
    }
    return a;
}

fn u64_greater(a: vec2<u32>, b: vec2<u32>) -> bool {
    return a.y > b.y || (a.y == b.y && a.x > b.x);
}

// a << s for s in [0, 63].
fn u64_shl(a: vec2<u32>, s: u32) -> vec2<u32> {
    if (s == 0u) {
        return a;
    }
    if (s >= 32u) {
        return vec2<u32>(0u, a.x << (s - 32u));
    }
    return vec2<u32>(a.x << s, (a.y << s) | (a.x >> (32u - s)));
}

// a >> s (logical) for s in [0, 63].
fn u64_shr(a: vec2<u32>, s: u32) -> vec2<u32> {
    if (s == 0u) {
        return a;
    }
    if (s >= 32u) {
        return vec2<u32>(a.y >> (s - 32u), 0u);
    }
    return vec2<u32>((a.x >> s) | (a.y << (32u - s)), a.y >> s);
}

// The full 64-bit product of two u32.
fn u32_mul_wide(a: u32, b: u32) -> vec2<u32> {
    let al = a & 0xffffu;
    let ah = a >> 16u;
    let bl = b & 0xffffu;
    let bh = b >> 16u;
    let ll = al * bl;
    let lh = al * bh;
    let hl = ah * bl;
    let mid = lh + hl;
    let lo = ll + (mid << 16u);
    let hi = ah * bh + (mid >> 16u) + select(0u, 0x10000u, mid < lh) + select(0u, 1u, lo < ll);
    return vec2<u32>(lo, hi);
}

// The low 64 bits of a * b.
fn u64_mul_u32(a: vec2<u32>, b: u32) -> vec2<u32> {
    let p = u32_mul_wide(a.x, b);
    return vec2<u32>(p.x, p.y + a.y * b);
}

fn tick_limit() -> vec2<u32> {
    return vec2<u32>(0u, TICK_LIMIT_HI);
}

fn ticks_get(t: Ticks) -> vec2<u32> {
    return vec2<u32>(t.lo, t.hi);
}

fn ticks_of(v: vec2<u32>) -> Ticks {
    return Ticks(v.x, v.y);
}

// Seconds (or cycles) as f32: high word, then low. Rust: Ticks::to_f32.
fn ticks_to_f32(v: vec2<u32>) -> f32 {
    return f32(bitcast<i32>(v.y)) * (1.0 / 256.0) + f32(v.x) * (1.0 / 1099511627776.0);
}

// |v| = m * 2^e with m an integer below 2^24; m is 0 for zero and for what is not finite.
struct F32Parts {
    m: u32,
    e: i32,
}

fn f32_parts(v: f32) -> F32Parts {
    let bits = bitcast<u32>(v);
    let exponent = (bits >> 23u) & 0xffu;
    let mantissa = bits & 0x7fffffu;
    if (exponent == 255u) {
        return F32Parts(0u, 0);
    }
    if (exponent == 0u) {
        return F32Parts(mantissa, -149);
    }
    return F32Parts(mantissa | 0x800000u, i32(exponent) - 150);
}

fn f32_negative(v: f32) -> bool {
    return (bitcast<u32>(v) >> 31u) != 0u && (bitcast<u32>(v) & 0x7fffffffu) != 0u;
}

// x * 2^s rounded to the nearest integer (ties up), saturated at 2^61.
fn shift_round(x: vec2<u32>, s: i32) -> vec2<u32> {
    if (x.x == 0u && x.y == 0u) {
        return x;
    }
    if (s >= 0) {
        if (s >= 62 || u64_greater(x, u64_shr(tick_limit(), u32(s)))) {
            return tick_limit();
        }
        return u64_shl(x, u32(s));
    }
    if (s <= -64) {
        return vec2<u32>(0u, 0u);
    }
    let r = u32(-s);
    let round_bit = u64_shr(x, r - 1u).x & 1u;
    return i64_add(u64_shr(x, r), vec2<u32>(round_bit, 0u));
}

// The nearest tick count to `seconds`, saturated at +-2^61; what is not finite gives 0.
fn ticks_from_f32(seconds: f32) -> vec2<u32> {
    let p = f32_parts(seconds);
    let t = shift_round(vec2<u32>(p.m, 0u), p.e + i32(TICK_BITS));
    if (f32_negative(seconds)) {
        return i64_neg(t);
    }
    return t;
}

// rate * dt / per in ticks: the exact product rate * dt (24 x 24 bits) divided by per's 24-bit
// mantissa byte by byte (long division: a quotient of 46 bits or more), then rounded once.
fn ratio_ticks(rate: f32, dt: f32, per: f32) -> vec2<u32> {
    let pr = f32_parts(rate);
    let pd = f32_parts(dt);
    let pp = f32_parts(per);
    if (pr.m == 0u || pd.m == 0u || pp.m == 0u) {
        return vec2<u32>(0u, 0u);
    }
    let shift = countLeadingZeros(pp.m) - 8u;
    let mp = pp.m << shift;
    let ep = pp.e - i32(shift);
    let product = u32_mul_wide(pr.m, pd.m);
    // (product << 24) / mp: the six bytes of the 48-bit product, high first, then three zero
    // bytes. Each partial remainder is below mp < 2^24, so (r << 8) | byte fits in 32 bits.
    var quotient = vec2<u32>(0u, 0u);
    var r = 0u;
    for (var k = 0u; k < 9u; k++) {
        var digit = 0u;
        if (k < 6u) {
            let at = 40u - 8u * k;
            if (at >= 32u) {
                digit = (product.y >> (at - 32u)) & 0xffu;
            } else {
                digit = (product.x >> at) & 0xffu;
            }
        }
        let partial = (r << 8u) | digit;
        quotient = u64_shl(quotient, 8u);
        quotient.x |= partial / mp;
        r = partial % mp;
    }
    let t = shift_round(quotient, pr.e + pd.e - ep - 24 + i32(TICK_BITS));
    if (f32_negative(rate) != f32_negative(dt)) {
        return i64_neg(t);
    }
    return t;
}

// (q, r) with x = q * period + r and 0 <= r < period, |x| clamped to 2^30 periods first. Two f32
// estimates of q, each taken off in exact integer steps, then whole periods until r is in range.
struct Wrapped {
    q: i32,
    r: vec2<u32>,
}

fn wrap_ticks(x_in: vec2<u32>, period_in: vec2<u32>) -> Wrapped {
    var period = period_in;
    if (i64_less(period, vec2<u32>(1u, 0u))) {
        period = vec2<u32>(1u, 0u);
    }
    var x = x_in;
    var magnitude = x;
    if (i64_negative(x)) {
        magnitude = i64_neg(x);
    }
    if (u64_greater(u64_shr(magnitude, 30u), period)) {
        x = u64_shl(period, 30u);
        if (i64_negative(x_in)) {
            x = i64_neg(x);
        }
    }
    let pf = ticks_to_f32(period);
    var q = 0;
    for (var estimate = 0u; estimate < 2u; estimate++) {
        let e = i32(clamp(floor(ticks_to_f32(x) / pf), -1073741824.0, 1073741824.0));
        var taken = u64_mul_u32(period, u32(abs(e)));
        if (e < 0) {
            taken = i64_neg(taken);
        }
        x = i64_add(x, i64_neg(taken));
        q += e;
    }
    for (var fix = 0u; fix < 4u; fix++) {
        if (i64_negative(x)) {
            x = i64_add(x, period);
            q -= 1;
        } else if (!i64_less(x, period)) {
            x = i64_add(x, i64_neg(period));
            q += 1;
        }
    }
    return Wrapped(q, x);
}

// A state's period in ticks: `duration` seconds, or 1 cycle for a tree; at least one tick.
fn period_ticks(duration: f32) -> vec2<u32> {
    let t = ticks_from_f32(duration);
    if (i64_less(t, vec2<u32>(1u, 0u))) {
        return vec2<u32>(1u, 0u);
    }
    return t;
}

// floor(x / period) for |x| <= 2 period.
fn floor_small(x: vec2<u32>, period: vec2<u32>) -> i32 {
    if (i64_negative(x)) {
        if (i64_less(x, i64_neg(period))) {
            return -2;
        }
        return -1;
    }
    if (i64_less(x, period)) {
        return 0;
    }
    if (i64_less(x, i64_add(period, period))) {
        return 1;
    }
    return 2;
}
