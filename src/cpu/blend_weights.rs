//! Mirror of `shaders/shared/blend_weights.wgsl`, function by function (same names, same
//! operations in the same order): the weights of a blend node's children for given parameters.

use crate::blend::BlendLibrary;
use crate::layout::{GpuBlendNode, MAX_BLEND_CHILDREN, MAX_BLEND_CLIPS, MAX_TREE_NODES, node_kind};
use crate::library::AnimationLibrary;
use glam::{Vec2, Vec3, Vec4};

/// Parameters are clamped to ±this before use, so that no product overflows. WGSL
/// `BLEND_PARAM_LIMIT`.
pub const BLEND_PARAM_LIMIT: f32 = 1.0e6;
/// Barycentric coordinates down to −this count as inside a triangle. WGSL `BLEND_INSIDE_EPS`.
pub const BLEND_INSIDE_EPS: f32 = 1.0e-5;
/// Gradient-band sums below this fall back to the nearest sample. WGSL `BLEND_SUM_EPS`.
pub const BLEND_SUM_EPS: f32 = 1.0e-6;
/// Simple directional: |det| below this times |p1||p2| means opposite directions. WGSL
/// `BLEND_DET_EPS`.
pub const BLEND_DET_EPS: f32 = 1.0e-6;
/// π as the blend weights use it. WGSL `BLEND_PI`.
pub const BLEND_PI: f32 = std::f32::consts::PI;
/// 2π. WGSL `BLEND_TAU`.
pub const BLEND_TAU: f32 = std::f32::consts::TAU;
/// Larger than any distance the blend weights compare. WGSL `BLEND_BIG`.
pub const BLEND_BIG: f32 = 3.0e38;

fn clampf(x: f32, lo: f32, hi: f32) -> f32 {
    x.max(lo).min(hi)
}

/// Parameter `index` of `params`: NaN reads as 0, the rest is clamped to ±[`BLEND_PARAM_LIMIT`].
fn blend_param(params: Vec4, index: u32) -> f32 {
    let v = params[index.min(3) as usize];
    let bits = v.to_bits();
    if (bits & 0x7fff_ffff) > 0x7f80_0000 {
        return 0.0;
    }
    clampf(v, -BLEND_PARAM_LIMIT, BLEND_PARAM_LIMIT)
}

fn blend_pos(lib: &BlendLibrary, node: &GpuBlendNode, i: u32) -> Vec2 {
    lib.children[(node.child_offset + i) as usize].position
}

fn blend_cross(a: Vec2, b: Vec2) -> f32 {
    a.x * b.y - a.y * b.x
}

fn blend_dot(a: Vec2, b: Vec2) -> f32 {
    a.x * b.x + a.y * b.y
}

fn blend_length(a: Vec2) -> f32 {
    blend_dot(a, a).sqrt()
}

/// Unsigned angle between `a` and `b`, 0 if either is 0.
fn blend_angle(a: Vec2, b: Vec2) -> f32 {
    let c = blend_cross(a, b);
    let d = blend_dot(a, b);
    if c == 0.0 && d == 0.0 {
        return 0.0;
    }
    c.abs().atan2(d)
}

/// An angle in (−2π, 2π) wrapped to (−π, π].
fn blend_wrap_angle(d: f32) -> f32 {
    let mut a = d;
    if a > BLEND_PI {
        a -= BLEND_TAU;
    }
    if a <= -BLEND_PI {
        a += BLEND_TAU;
    }
    a
}

/// Barycentric coordinates of `p` in triangle `a b c`; (−1, −1, −1) for a degenerate triangle.
fn blend_barycentric(a: Vec2, b: Vec2, c: Vec2, p: Vec2) -> Vec3 {
    let v0 = b - a;
    let v1 = c - a;
    let v2 = p - a;
    let d = v0.x * v1.y - v1.x * v0.y;
    if d == 0.0 {
        return Vec3::new(-1.0, -1.0, -1.0);
    }
    let wb = (v2.x * v1.y - v1.x * v2.y) / d;
    let wc = (v0.x * v2.y - v2.x * v0.y) / d;
    Vec3::new(1.0 - wb - wc, wb, wc)
}

/// Closest point of segment `a b` to `p`: (parameter along the segment, squared distance).
fn blend_segment_closest(a: Vec2, b: Vec2, p: Vec2) -> Vec2 {
    let ab = b - a;
    let l = blend_dot(ab, ab);
    let mut t = 0.0;
    if l > 0.0 {
        t = clampf(blend_dot(p - a, ab) / l, 0.0, 1.0);
    }
    let q = a + ab * t;
    Vec2::new(t, blend_dot(p - q, p - q))
}

/// Index of the sample nearest to `p`.
fn blend_nearest(lib: &BlendLibrary, node: &GpuBlendNode, n: u32, p: Vec2) -> u32 {
    let mut best = 0u32;
    let mut best_d = BLEND_BIG;
    for i in 0..n {
        let d = p - blend_pos(lib, node, i);
        let dd = blend_dot(d, d);
        if dd < best_d {
            best_d = dd;
            best = i;
        }
    }
    best
}

/// `h / Σh`, or the nearest sample alone when Σh is (numerically) 0.
fn blend_normalize(lib: &BlendLibrary, node: &GpuBlendNode, n: u32, h: [f32; 16], sum: f32, p: Vec2) -> [f32; 16] {
    let mut w = [0.0f32; 16];
    if sum > BLEND_SUM_EPS {
        for i in 0..n {
            w[i as usize] = h[i as usize] / sum;
        }
        return w;
    }
    w[blend_nearest(lib, node, n, p) as usize] = 1.0;
    w
}

fn blend_weights_1d(lib: &BlendLibrary, node: &GpuBlendNode, n: u32, b: f32) -> [f32; 16] {
    let mut w = [0.0f32; 16];
    if n == 1 {
        w[0] = 1.0;
        return w;
    }
    let x = clampf(b, blend_pos(lib, node, 0).x, blend_pos(lib, node, n - 1).x);
    let mut done = false;
    for i in 0..n - 1 {
        let x0 = blend_pos(lib, node, i).x;
        let x1 = blend_pos(lib, node, i + 1).x;
        if !done && x <= x1 {
            let a = (x1 - x) / (x1 - x0);
            w[i as usize] = a;
            w[(i + 1) as usize] = 1.0 - a;
            done = true;
        }
    }
    w
}

fn blend_weights_bilinear(lib: &BlendLibrary, node: &GpuBlendNode, p: Vec2) -> [f32; 16] {
    let mut w = [0.0f32; 16];
    let c0 = blend_pos(lib, node, 0);
    let c1 = blend_pos(lib, node, 1);
    let c2 = blend_pos(lib, node, 2);
    let fx = clampf((p.x - c0.x) / (c1.x - c0.x), 0.0, 1.0);
    let fy = clampf((p.y - c0.y) / (c2.y - c0.y), 0.0, 1.0);
    w[0] = (1.0 - fx) * (1.0 - fy);
    w[1] = fx * (1.0 - fy);
    w[2] = (1.0 - fx) * fy;
    w[3] = fx * fy;
    w
}

/// Barycentric weights of `p` in triangle `a b c`, clamped to ≥ 0 and normalized, in xyz; w is 1
/// if `p` is in the triangle (within `BLEND_INSIDE_EPS`), else 0.
fn blend_inside(a: Vec2, b: Vec2, c: Vec2, p: Vec2) -> Vec4 {
    let bc = blend_barycentric(a, b, c, p);
    if bc.x.min(bc.y).min(bc.z) < -BLEND_INSIDE_EPS {
        return Vec4::ZERO;
    }
    let k = bc.max(Vec3::ZERO);
    let s = k.x + k.y + k.z;
    Vec4::new(k.x / s, k.y / s, k.z / s, 1.0)
}

fn blend_weights_triangle(lib: &BlendLibrary, node: &GpuBlendNode, p: Vec2) -> [f32; 16] {
    let mut w = [0.0f32; 16];
    let a = blend_pos(lib, node, 0);
    let b = blend_pos(lib, node, 1);
    let c = blend_pos(lib, node, 2);
    let r = blend_inside(a, b, c, p);
    if r.w > 0.0 {
        w[0] = r.x;
        w[1] = r.y;
        w[2] = r.z;
        return w;
    }
    let mut best_d = BLEND_BIG;
    let mut best_e = 0u32;
    let mut best_t = 0.0f32;
    for e in 0..3u32 {
        let r = blend_segment_closest(blend_pos(lib, node, e), blend_pos(lib, node, (e + 1) % 3), p);
        if r.y < best_d {
            best_d = r.y;
            best_e = e;
            best_t = r.x;
        }
    }
    w[best_e as usize] = 1.0 - best_t;
    w[((best_e + 1) % 3) as usize] = best_t;
    w
}

fn blend_weights_delaunay(lib: &BlendLibrary, node: &GpuBlendNode, p: Vec2) -> [f32; 16] {
    let mut w = [0.0f32; 16];
    let mut found = false;
    let mut best_d = BLEND_BIG;
    let mut best_a = 0u32;
    let mut best_b = 0u32;
    let mut best_t = 0.0f32;
    for k in 0..node.triangle_count {
        let e = lib.triangles[(node.triangle_offset + k) as usize];
        if e[3] == 0 {
            if !found {
                let a = blend_pos(lib, node, e[0]);
                let b = blend_pos(lib, node, e[1]);
                let c = blend_pos(lib, node, e[2]);
                let r = blend_inside(a, b, c, p);
                if r.w > 0.0 {
                    w[e[0] as usize] = r.x;
                    w[e[1] as usize] = r.y;
                    w[e[2] as usize] = r.z;
                    found = true;
                }
            }
        } else {
            let r = blend_segment_closest(blend_pos(lib, node, e[0]), blend_pos(lib, node, e[1]), p);
            if r.y < best_d {
                best_d = r.y;
                best_a = e[0];
                best_b = e[1];
                best_t = r.x;
            }
        }
    }
    if !found {
        w[best_a as usize] = 1.0 - best_t;
        w[best_b as usize] = best_t;
    }
    w
}

fn blend_weights_simple_directional(lib: &BlendLibrary, node: &GpuBlendNode, n: u32, p: Vec2) -> [f32; 16] {
    let mut w = [0.0f32; 16];
    let mut center = n;
    for i in 0..n {
        let q = blend_pos(lib, node, i);
        if q.x == 0.0 && q.y == 0.0 {
            center = i;
        }
    }
    // 1. p = 0: the center, or every sample equally.
    if p.x == 0.0 && p.y == 0.0 {
        if center < n {
            w[center as usize] = 1.0;
            return w;
        }
        for i in 0..n {
            w[i as usize] = 1.0 / n as f32;
        }
        return w;
    }
    // 2. The nearest sample counter-clockwise of p (smallest angle from p, counter-clockwise, in
    //    [0, 2π)) and the nearest clockwise (largest).
    let ap = p.y.atan2(p.x);
    let mut i1 = n;
    let mut i2 = n;
    let mut a1 = BLEND_BIG;
    let mut a2 = -1.0f32;
    for i in 0..n {
        if i != center {
            let q = blend_pos(lib, node, i);
            let mut d = blend_wrap_angle(q.y.atan2(q.x) - ap);
            if d < 0.0 {
                d += BLEND_TAU;
            }
            if d < a1 {
                a1 = d;
                i1 = i;
            }
            if d > a2 {
                a2 = d;
                i2 = i;
            }
        }
    }
    // 3. p = t1 p1 + t2 p2.
    let p1 = blend_pos(lib, node, i1);
    let p2 = blend_pos(lib, node, i2);
    let det = p1.x * p2.y - p2.x * p1.y;
    let mut t1 = 0.0f32;
    let mut t2 = 0.0f32;
    if det.abs() > BLEND_DET_EPS * blend_length(p1) * blend_length(p2) {
        t1 = (p.x * p2.y - p2.x * p.y) / det;
        t2 = (p1.x * p.y - p.x * p1.y) / det;
    }
    // 4. Node influence and contributions.
    let s = t1 + t2;
    let influence = clampf(s, 0.0, 1.0);
    let mut c1 = 0.5f32;
    let mut c2 = 0.5f32;
    if t1 >= 0.0 && t2 >= 0.0 && s > 0.0 {
        c1 = t1 / s;
        c2 = t2 / s;
    }
    w[i1 as usize] += influence * c1;
    w[i2 as usize] += influence * c2;
    // 5. The rest to the center, or spread over all samples.
    let rest = 1.0 - influence;
    if center < n {
        w[center as usize] += rest;
    } else {
        for i in 0..n {
            w[i as usize] += rest / n as f32;
        }
    }
    w
}

fn blend_weights_freeform_cartesian(lib: &BlendLibrary, node: &GpuBlendNode, n: u32, p: Vec2) -> [f32; 16] {
    let mut h = [0.0f32; 16];
    let mut sum = 0.0f32;
    for i in 0..n {
        let pi = blend_pos(lib, node, i);
        let mut hi = 1.0f32;
        for j in 0..n {
            if j != i {
                let pij = blend_pos(lib, node, j) - pi;
                let v = 1.0 - blend_dot(p - pi, pij) / blend_dot(pij, pij);
                hi = hi.min(clampf(v, 0.0, 1.0));
            }
        }
        h[i as usize] = hi;
        sum += hi;
    }
    blend_normalize(lib, node, n, h, sum, p)
}

fn blend_weights_freeform_directional(lib: &BlendLibrary, node: &GpuBlendNode, n: u32, p: Vec2) -> [f32; 16] {
    let mut h = [0.0f32; 16];
    let mut sum = 0.0f32;
    let lp = blend_length(p);
    for i in 0..n {
        let pi = blend_pos(lib, node, i);
        let li = blend_length(pi);
        let mut hi = 1.0f32;
        let mut negative = false;
        for j in 0..n {
            if j != i {
                let pj = blend_pos(lib, node, j);
                let lj = blend_length(pj);
                let m = (li + lj) * 0.5;
                let ri = li / m;
                let rj = lj / m;
                let rp = lp / m;
                let mut alpha = 2.0f32;
                let mut tij;
                let mut tip;
                if li == 0.0 {
                    tij = blend_angle(p, pj);
                    tip = 0.0;
                    alpha = 1.0;
                } else if lj == 0.0 {
                    tij = blend_angle(p, pi);
                    tip = tij;
                    alpha = 1.0;
                } else {
                    tij = blend_angle(pi, pj);
                    if p.x == 0.0 && p.y == 0.0 {
                        tip = tij;
                    } else if tij == 0.0 {
                        tip = 0.0;
                    } else {
                        tip = blend_angle(pi, p);
                        let side = blend_cross(pi, p) * blend_cross(pi, pj);
                        if side < 0.0 && tij < 0.99 * BLEND_PI {
                            tip = -tip;
                        }
                    }
                }
                tij *= alpha;
                tip *= alpha;
                let vij = Vec2::new(tij, rj - ri);
                let vip = Vec2::new(tip, rp - ri);
                let hij = 1.0 - blend_dot(vij, vip) / blend_dot(vij, vij);
                if hij < 0.0 {
                    negative = true;
                }
                hi = hi.min(hij);
            }
        }
        if negative {
            hi = 0.0;
        }
        h[i as usize] = hi;
        sum += hi;
    }
    blend_normalize(lib, node, n, h, sum, p)
}

fn blend_weights_direct(lib: &BlendLibrary, node: &GpuBlendNode, n: u32, params: Vec4) -> [f32; 16] {
    let mut w = [0.0f32; 16];
    for i in 0..n {
        let c = lib.children[(node.child_offset + i) as usize];
        w[i as usize] = blend_param(params, c.parameter).max(0.0);
    }
    w
}

/// Weights of a node's children (first `child_count` entries; the rest 0) for parameters `params`.
///
/// The children are `lib.children[node.child_offset..][..child_count]`, a Delaunay node's
/// triangles `lib.triangles[node.triangle_offset..][..triangle_count]`. A NaN parameter reads as
/// 0 and parameters are clamped to ±[`BLEND_PARAM_LIMIT`], so the weights are never NaN. 1D: the
/// parameter is clamped to the end thresholds. 2D kinds sum to 1; a parameter on a sample gives
/// that sample weight 1. Direct: each child's parameter, clamped to ≥ 0, not normalized. Clip
/// nodes have no children (all 0).
///
/// Mirror of WGSL `node_child_weights` in `shaders/shared/blend_weights.wgsl`.
#[must_use]
pub(crate) fn node_child_weights(lib: &BlendLibrary, node: &GpuBlendNode, params: Vec4) -> [f32; 16] {
    let w = [0.0f32; 16];
    let n = node.child_count.min(MAX_BLEND_CHILDREN);
    if n == 0 {
        return w;
    }
    if node.kind == node_kind::DIRECT {
        return blend_weights_direct(lib, node, n, params);
    }
    let p = Vec2::new(blend_param(params, node.param_x), blend_param(params, node.param_y));
    if node.kind == node_kind::BLEND_1D {
        return blend_weights_1d(lib, node, n, p.x);
    }
    if node.kind == node_kind::BILINEAR {
        return blend_weights_bilinear(lib, node, p);
    }
    if node.kind == node_kind::TRIANGLE {
        return blend_weights_triangle(lib, node, p);
    }
    if node.kind == node_kind::DELAUNAY {
        return blend_weights_delaunay(lib, node, p);
    }
    if node.kind == node_kind::SIMPLE_DIRECTIONAL {
        return blend_weights_simple_directional(lib, node, n, p);
    }
    if node.kind == node_kind::FREEFORM_CARTESIAN {
        return blend_weights_freeform_cartesian(lib, node, n, p);
    }
    if node.kind == node_kind::FREEFORM_DIRECTIONAL {
        return blend_weights_freeform_directional(lib, node, n, p);
    }
    w
}

/// Leaves of a blend tree with their weights. WGSL `Leaves`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Leaves {
    /// Entries in use.
    pub count: u32,
    /// Clip of each leaf.
    pub clips: [u32; MAX_BLEND_CLIPS as usize],
    /// Weight of each leaf.
    pub weights: [f32; MAX_BLEND_CLIPS as usize],
}

/// The clips at the leaves of the tree whose nodes start at `offset`, with their weights for
/// `params`. WGSL `tree_leaves` (`shaders/shared/blend_weights.wgsl`).
#[must_use]
#[expect(
    clippy::neg_cmp_op_on_partial_ord,
    reason = "`!(x > 0.0)` also rejects NaN, exactly as the shader does"
)]
pub(crate) fn tree_leaves(lib: &AnimationLibrary, offset: u32, count: u32, params: Vec4) -> Leaves {
    let mut node_weight = [0.0f32; MAX_TREE_NODES as usize];
    node_weight[0] = 1.0;
    let mut leaves = Leaves::default();
    for k in 0..count.min(MAX_TREE_NODES) {
        let w = node_weight[k as usize];
        if !(w > 0.0) {
            continue;
        }
        let node = &lib.blend().nodes[(offset + k) as usize];
        if node.kind == node_kind::CLIP {
            let mut slot = leaves.count;
            for m in 0..leaves.count {
                if leaves.clips[m as usize] == node.clip {
                    slot = m;
                }
            }
            if slot < leaves.count {
                leaves.weights[slot as usize] += w;
            } else if leaves.count < MAX_BLEND_CLIPS {
                leaves.clips[slot as usize] = node.clip;
                leaves.weights[slot as usize] = w;
                leaves.count += 1;
            } else {
                let mut lightest = 0;
                for m in 1..MAX_BLEND_CLIPS as usize {
                    if leaves.weights[m] < leaves.weights[lightest] {
                        lightest = m;
                    }
                }
                if leaves.weights[lightest] < w {
                    leaves.clips[lightest] = node.clip;
                    leaves.weights[lightest] = w;
                }
            }
            continue;
        }
        let cw = node_child_weights(lib.blend(), node, params);
        for c in 0..node.child_count.min(MAX_BLEND_CHILDREN) {
            let child = lib.blend().children[(node.child_offset + c) as usize].node;
            if child > k && child < count {
                node_weight[child as usize] += w * cw[c as usize];
            }
        }
    }
    leaves
}

/// The checked form of [`node_child_weights`], public as `cpu::node_child_weights`.
pub(crate) mod checked {
    use crate::blend::BlendLibrary;
    use crate::error::{Error, Result};
    use crate::layout::{GpuBlendNode, MAX_BLEND_CHILDREN, node_kind};
    use glam::Vec4;

    /// Weights of a node's children (first `child_count` entries; the rest 0) for parameters
    /// `params`: see [`blend_weights`](crate::cpu::blend_weights) for what each kind computes. WGSL
    /// `node_child_weights`.
    ///
    /// Errors ([`Error::Limit`]): children or triangles beyond `lib`'s, a triangle naming a child
    /// the node does not have, a bilinear node with fewer than 4 children or a triangle node with
    /// fewer than 3.
    pub fn node_child_weights(lib: &BlendLibrary, node: &GpuBlendNode, params: Vec4) -> Result<[f32; 16]> {
        let fail = |what: String| Err(Error::Limit { what });
        let n = node.child_count.min(MAX_BLEND_CHILDREN);
        let end = u64::from(node.child_offset) + u64::from(n);
        if end > lib.children.len() as u64 {
            return fail(format!(
                "blend node children {}..{end} lie beyond the library's {}",
                node.child_offset,
                lib.children.len()
            ));
        }
        let least = match node.kind {
            node_kind::BILINEAR => 4,
            node_kind::TRIANGLE => 3,
            _ => 0,
        };
        if n > 0 && n < least {
            return fail(format!(
                "a blend node of kind {} needs {least} children, not {n}",
                node.kind
            ));
        }
        if node.kind == node_kind::DELAUNAY && n > 0 {
            let end = u64::from(node.triangle_offset) + u64::from(node.triangle_count);
            let Some(triangles) = lib.triangles.get(node.triangle_offset as usize..end as usize) else {
                return fail(format!(
                    "blend node triangles {}..{end} lie beyond the library's {}",
                    node.triangle_offset,
                    lib.triangles.len()
                ));
            };
            for (k, e) in triangles.iter().enumerate() {
                let used = if e[3] == 0 { &e[..3] } else { &e[..2] };
                if used.iter().any(|&c| c >= n) {
                    return fail(format!(
                        "blend node triangle {k} {e:?} names a child past its {n} children"
                    ));
                }
            }
        }
        Ok(super::node_child_weights(lib, node, params))
    }
}
