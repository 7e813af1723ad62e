// Blend-space weights of one blend node's children, reading the nodes' children and triangles
// from the library. Rust mirror: src/blend.rs (same names, same operations in the same order).

#define_import_path wgpu_anim::blend_weights

#import wgpu_anim::types::{
    BlendNode, MAX_BLEND_CHILDREN, MAX_BLEND_CLIPS, MAX_TREE_NODES, NODE_CLIP, NODE_BILINEAR, NODE_BLEND_1D, NODE_DELAUNAY, NODE_DIRECT,
    NODE_FREEFORM_CARTESIAN, NODE_FREEFORM_DIRECTIONAL, NODE_SIMPLE_DIRECTIONAL, NODE_TRIANGLE,
}
#import wgpu_anim::library::{blend_child, blend_node, blend_triangle}

// Rust: blend::BLEND_PARAM_LIMIT and the private constants next to it.
const BLEND_PARAM_LIMIT: f32 = 1.0e6;
const BLEND_INSIDE_EPS: f32 = 1.0e-5;
const BLEND_SUM_EPS: f32 = 1.0e-6;
const BLEND_DET_EPS: f32 = 1.0e-6;
const BLEND_PI: f32 = 3.14159265358979323846;
const BLEND_TAU: f32 = 6.28318530717958647693;
const BLEND_BIG: f32 = 3.0e38;

// Parameter `index`: NaN reads as 0, the rest is clamped to +-BLEND_PARAM_LIMIT.
fn blend_param(params: vec4<f32>, index: u32) -> f32 {
    let v = params[min(index, 3u)];
    let bits = bitcast<u32>(v);
    if ((bits & 0x7fffffffu) > 0x7f800000u) {
        return 0.0;
    }
    return clamp(v, -BLEND_PARAM_LIMIT, BLEND_PARAM_LIMIT);
}

fn blend_pos(node: BlendNode, i: u32) -> vec2<f32> {
    return blend_child(node.child_offset + i).position;
}

fn blend_cross(a: vec2<f32>, b: vec2<f32>) -> f32 {
    return a.x * b.y - a.y * b.x;
}

fn blend_dot(a: vec2<f32>, b: vec2<f32>) -> f32 {
    return a.x * b.x + a.y * b.y;
}

fn blend_length(a: vec2<f32>) -> f32 {
    return sqrt(blend_dot(a, a));
}

// Unsigned angle between a and b, 0 if either is 0.
fn blend_angle(a: vec2<f32>, b: vec2<f32>) -> f32 {
    let c = blend_cross(a, b);
    let d = blend_dot(a, b);
    if (c == 0.0 && d == 0.0) {
        return 0.0;
    }
    return atan2(abs(c), d);
}

// An angle in (-2pi, 2pi) wrapped to (-pi, pi].
fn blend_wrap_angle(d: f32) -> f32 {
    var a = d;
    if (a > BLEND_PI) {
        a -= BLEND_TAU;
    }
    if (a <= -BLEND_PI) {
        a += BLEND_TAU;
    }
    return a;
}

// Barycentric coordinates of p in triangle a b c; (-1, -1, -1) for a degenerate triangle.
fn blend_barycentric(a: vec2<f32>, b: vec2<f32>, c: vec2<f32>, p: vec2<f32>) -> vec3<f32> {
    let v0 = b - a;
    let v1 = c - a;
    let v2 = p - a;
    let d = v0.x * v1.y - v1.x * v0.y;
    if (d == 0.0) {
        return vec3<f32>(-1.0, -1.0, -1.0);
    }
    let wb = (v2.x * v1.y - v1.x * v2.y) / d;
    let wc = (v0.x * v2.y - v2.x * v0.y) / d;
    return vec3<f32>(1.0 - wb - wc, wb, wc);
}

// Closest point of segment a b to p: (parameter along the segment, squared distance).
fn blend_segment_closest(a: vec2<f32>, b: vec2<f32>, p: vec2<f32>) -> vec2<f32> {
    let ab = b - a;
    let l = blend_dot(ab, ab);
    var t = 0.0;
    if (l > 0.0) {
        t = clamp(blend_dot(p - a, ab) / l, 0.0, 1.0);
    }
    let q = a + ab * t;
    return vec2<f32>(t, blend_dot(p - q, p - q));
}

// Index of the sample nearest to p.
fn blend_nearest(node: BlendNode, n: u32, p: vec2<f32>) -> u32 {
    var best = 0u;
    var best_d = BLEND_BIG;
    for (var i = 0u; i < n; i++) {
        let d = p - blend_pos(node, i);
        let dd = blend_dot(d, d);
        if (dd < best_d) {
            best_d = dd;
            best = i;
        }
    }
    return best;
}

// h / sum(h), or the nearest sample alone when the sum is (numerically) 0.
fn blend_normalize(node: BlendNode, n: u32, h_in: array<f32, 16>, sum: f32, p: vec2<f32>) -> array<f32, 16> {
    var h = h_in;
    var w: array<f32, 16>;
    if (sum > BLEND_SUM_EPS) {
        for (var i = 0u; i < n; i++) {
            w[i] = h[i] / sum;
        }
        return w;
    }
    w[blend_nearest(node, n, p)] = 1.0;
    return w;
}

fn blend_weights_1d(node: BlendNode, n: u32, b: f32) -> array<f32, 16> {
    var w: array<f32, 16>;
    if (n == 1u) {
        w[0] = 1.0;
        return w;
    }
    let x = clamp(b, blend_pos(node, 0u).x, blend_pos(node, n - 1u).x);
    var done = false;
    for (var i = 0u; i < n - 1u; i++) {
        let x0 = blend_pos(node, i).x;
        let x1 = blend_pos(node, i + 1u).x;
        if (!done && x <= x1) {
            let a = (x1 - x) / (x1 - x0);
            w[i] = a;
            w[i + 1u] = 1.0 - a;
            done = true;
        }
    }
    return w;
}

fn blend_weights_bilinear(node: BlendNode, p: vec2<f32>) -> array<f32, 16> {
    var w: array<f32, 16>;
    let c0 = blend_pos(node, 0u);
    let c1 = blend_pos(node, 1u);
    let c2 = blend_pos(node, 2u);
    let fx = clamp((p.x - c0.x) / (c1.x - c0.x), 0.0, 1.0);
    let fy = clamp((p.y - c0.y) / (c2.y - c0.y), 0.0, 1.0);
    w[0] = (1.0 - fx) * (1.0 - fy);
    w[1] = fx * (1.0 - fy);
    w[2] = (1.0 - fx) * fy;
    w[3] = fx * fy;
    return w;
}

// Barycentric weights of p in triangle a b c, clamped to >= 0 and normalized, in xyz; w is 1 if p is
// in the triangle (within BLEND_INSIDE_EPS), else 0.
fn blend_inside(a: vec2<f32>, b: vec2<f32>, c: vec2<f32>, p: vec2<f32>) -> vec4<f32> {
    let bc = blend_barycentric(a, b, c, p);
    if (min(min(bc.x, bc.y), bc.z) < -BLEND_INSIDE_EPS) {
        return vec4<f32>(0.0);
    }
    let k = max(bc, vec3<f32>(0.0));
    let s = k.x + k.y + k.z;
    return vec4<f32>(k.x / s, k.y / s, k.z / s, 1.0);
}

fn blend_weights_triangle(node: BlendNode, p: vec2<f32>) -> array<f32, 16> {
    var w: array<f32, 16>;
    let a = blend_pos(node, 0u);
    let b = blend_pos(node, 1u);
    let c = blend_pos(node, 2u);
    let r = blend_inside(a, b, c, p);
    if (r.w > 0.0) {
        w[0] = r.x;
        w[1] = r.y;
        w[2] = r.z;
        return w;
    }
    var best_d = BLEND_BIG;
    var best_e = 0u;
    var best_t = 0.0;
    for (var e = 0u; e < 3u; e++) {
        let r = blend_segment_closest(blend_pos(node, e), blend_pos(node, (e + 1u) % 3u), p);
        if (r.y < best_d) {
            best_d = r.y;
            best_e = e;
            best_t = r.x;
        }
    }
    w[best_e] = 1.0 - best_t;
    w[(best_e + 1u) % 3u] = best_t;
    return w;
}

fn blend_weights_delaunay(node: BlendNode, p: vec2<f32>) -> array<f32, 16> {
    var w: array<f32, 16>;
    var found = false;
    var best_d = BLEND_BIG;
    var best_a = 0u;
    var best_b = 0u;
    var best_t = 0.0;
    for (var k = 0u; k < node.triangle_count; k++) {
        let e = blend_triangle(node.triangle_offset + k);
        if (e.w == 0u) {
            if (!found) {
                let a = blend_pos(node, e.x);
                let b = blend_pos(node, e.y);
                let c = blend_pos(node, e.z);
                let r = blend_inside(a, b, c, p);
                if (r.w > 0.0) {
                    w[e.x] = r.x;
                    w[e.y] = r.y;
                    w[e.z] = r.z;
                    found = true;
                }
            }
        } else {
            let r = blend_segment_closest(blend_pos(node, e.x), blend_pos(node, e.y), p);
            if (r.y < best_d) {
                best_d = r.y;
                best_a = e.x;
                best_b = e.y;
                best_t = r.x;
            }
        }
    }
    if (!found) {
        w[best_a] = 1.0 - best_t;
        w[best_b] = best_t;
    }
    return w;
}

fn blend_weights_simple_directional(node: BlendNode, n: u32, p: vec2<f32>) -> array<f32, 16> {
    var w: array<f32, 16>;
    var center = n;
    for (var i = 0u; i < n; i++) {
        let q = blend_pos(node, i);
        if (q.x == 0.0 && q.y == 0.0) {
            center = i;
        }
    }
    // 1. p = 0: the center, or every sample equally.
    if (p.x == 0.0 && p.y == 0.0) {
        if (center < n) {
            w[center] = 1.0;
            return w;
        }
        for (var i = 0u; i < n; i++) {
            w[i] = 1.0 / f32(n);
        }
        return w;
    }
    // 2. The nearest sample counter-clockwise of p (smallest angle from p, counter-clockwise, in
    //    [0, 2pi)) and the nearest clockwise (largest).
    let ap = atan2(p.y, p.x);
    var i1 = n;
    var i2 = n;
    var a1 = BLEND_BIG;
    var a2 = -1.0;
    for (var i = 0u; i < n; i++) {
        if (i != center) {
            let q = blend_pos(node, i);
            var d = blend_wrap_angle(atan2(q.y, q.x) - ap);
            if (d < 0.0) {
                d += BLEND_TAU;
            }
            if (d < a1) {
                a1 = d;
                i1 = i;
            }
            if (d > a2) {
                a2 = d;
                i2 = i;
            }
        }
    }
    // 3. p = t1 p1 + t2 p2.
    let p1 = blend_pos(node, i1);
    let p2 = blend_pos(node, i2);
    let det = p1.x * p2.y - p2.x * p1.y;
    var t1 = 0.0;
    var t2 = 0.0;
    if (abs(det) > BLEND_DET_EPS * blend_length(p1) * blend_length(p2)) {
        t1 = (p.x * p2.y - p2.x * p.y) / det;
        t2 = (p1.x * p.y - p.x * p1.y) / det;
    }
    // 4. Node influence and contributions.
    let s = t1 + t2;
    let influence = clamp(s, 0.0, 1.0);
    var c1 = 0.5;
    var c2 = 0.5;
    if (t1 >= 0.0 && t2 >= 0.0 && s > 0.0) {
        c1 = t1 / s;
        c2 = t2 / s;
    }
    w[i1] += influence * c1;
    w[i2] += influence * c2;
    // 5. The rest to the center, or spread over all samples.
    let rest = 1.0 - influence;
    if (center < n) {
        w[center] += rest;
    } else {
        for (var i = 0u; i < n; i++) {
            w[i] += rest / f32(n);
        }
    }
    return w;
}

fn blend_weights_freeform_cartesian(node: BlendNode, n: u32, p: vec2<f32>) -> array<f32, 16> {
    var h: array<f32, 16>;
    var sum = 0.0;
    for (var i = 0u; i < n; i++) {
        let pi = blend_pos(node, i);
        var hi = 1.0;
        for (var j = 0u; j < n; j++) {
            if (j != i) {
                let pij = blend_pos(node, j) - pi;
                let v = 1.0 - blend_dot(p - pi, pij) / blend_dot(pij, pij);
                hi = min(hi, clamp(v, 0.0, 1.0));
            }
        }
        h[i] = hi;
        sum += hi;
    }
    return blend_normalize(node, n, h, sum, p);
}

fn blend_weights_freeform_directional(node: BlendNode, n: u32, p: vec2<f32>) -> array<f32, 16> {
    var h: array<f32, 16>;
    var sum = 0.0;
    let lp = blend_length(p);
    for (var i = 0u; i < n; i++) {
        let pi = blend_pos(node, i);
        let li = blend_length(pi);
        var hi = 1.0;
        var negative = false;
        for (var j = 0u; j < n; j++) {
            if (j != i) {
                let pj = blend_pos(node, j);
                let lj = blend_length(pj);
                let m = (li + lj) * 0.5;
                let ri = li / m;
                let rj = lj / m;
                let rp = lp / m;
                var alpha = 2.0;
                var tij: f32;
                var tip: f32;
                if (li == 0.0) {
                    tij = blend_angle(p, pj);
                    tip = 0.0;
                    alpha = 1.0;
                } else if (lj == 0.0) {
                    tij = blend_angle(p, pi);
                    tip = tij;
                    alpha = 1.0;
                } else {
                    tij = blend_angle(pi, pj);
                    if (p.x == 0.0 && p.y == 0.0) {
                        tip = tij;
                    } else if (tij == 0.0) {
                        tip = 0.0;
                    } else {
                        tip = blend_angle(pi, p);
                        let side = blend_cross(pi, p) * blend_cross(pi, pj);
                        if (side < 0.0 && tij < 0.99 * BLEND_PI) {
                            tip = -tip;
                        }
                    }
                }
                tij *= alpha;
                tip *= alpha;
                let vij = vec2<f32>(tij, rj - ri);
                let vip = vec2<f32>(tip, rp - ri);
                let hij = 1.0 - blend_dot(vij, vip) / blend_dot(vij, vij);
                if (hij < 0.0) {
                    negative = true;
                }
                hi = min(hi, hij);
            }
        }
        if (negative) {
            hi = 0.0;
        }
        h[i] = hi;
        sum += hi;
    }
    return blend_normalize(node, n, h, sum, p);
}

fn blend_weights_direct(node: BlendNode, n: u32, params: vec4<f32>) -> array<f32, 16> {
    var w: array<f32, 16>;
    for (var i = 0u; i < n; i++) {
        let c = blend_child(node.child_offset + i);
        w[i] = max(blend_param(params, c.parameter), 0.0);
    }
    return w;
}

// Weights of a node's children (first child_count entries; the rest 0) for parameters params.
// Rust: blend::node_child_weights.
fn node_child_weights(node: BlendNode, params: vec4<f32>) -> array<f32, 16> {
    var w: array<f32, 16>;
    let n = min(node.child_count, MAX_BLEND_CHILDREN);
    if (n == 0u) {
        return w;
    }
    if (node.kind == NODE_DIRECT) {
        return blend_weights_direct(node, n, params);
    }
    let p = vec2<f32>(blend_param(params, node.param_x), blend_param(params, node.param_y));
    if (node.kind == NODE_BLEND_1D) {
        return blend_weights_1d(node, n, p.x);
    }
    if (node.kind == NODE_BILINEAR) {
        return blend_weights_bilinear(node, p);
    }
    if (node.kind == NODE_TRIANGLE) {
        return blend_weights_triangle(node, p);
    }
    if (node.kind == NODE_DELAUNAY) {
        return blend_weights_delaunay(node, p);
    }
    if (node.kind == NODE_SIMPLE_DIRECTIONAL) {
        return blend_weights_simple_directional(node, n, p);
    }
    if (node.kind == NODE_FREEFORM_CARTESIAN) {
        return blend_weights_freeform_cartesian(node, n, p);
    }
    if (node.kind == NODE_FREEFORM_DIRECTIONAL) {
        return blend_weights_freeform_directional(node, n, p);
    }
    return w;
}

// The clips at the leaves of a blend tree and their weights for parameters `params`: node weights
// flow from the root (weight 1) down, nodes being in topological order. Rust: cpu::tree_leaves.
struct Leaves {
    count: u32,
    clips: array<u32, MAX_BLEND_CLIPS>,
    weights: array<f32, MAX_BLEND_CLIPS>,
}

fn tree_leaves(offset: u32, count: u32, params: vec4<f32>) -> Leaves {
    var node_weight: array<f32, MAX_TREE_NODES>;
    node_weight[0] = 1.0;
    var leaves: Leaves;
    for (var k = 0u; k < min(count, MAX_TREE_NODES); k++) {
        let w = node_weight[k];
        if (!(w > 0.0)) {
            continue;
        }
        let node = blend_node(offset + k);
        if (node.kind == NODE_CLIP) {
            // Keep the heaviest MAX_BLEND_CLIPS leaves (a clip reached twice merges).
            var slot = leaves.count;
            for (var m = 0u; m < leaves.count; m++) {
                if (leaves.clips[m] == node.clip) {
                    slot = m;
                }
            }
            if (slot < leaves.count) {
                leaves.weights[slot] += w;
            } else if (leaves.count < MAX_BLEND_CLIPS) {
                leaves.clips[slot] = node.clip;
                leaves.weights[slot] = w;
                leaves.count += 1u;
            } else {
                var lightest = 0u;
                for (var m = 1u; m < MAX_BLEND_CLIPS; m++) {
                    if (leaves.weights[m] < leaves.weights[lightest]) {
                        lightest = m;
                    }
                }
                if (leaves.weights[lightest] < w) {
                    leaves.clips[lightest] = node.clip;
                    leaves.weights[lightest] = w;
                }
            }
            continue;
        }
        let cw = node_child_weights(node, params);
        for (var c = 0u; c < min(node.child_count, MAX_BLEND_CHILDREN); c++) {
            let child = blend_child(node.child_offset + c).node;
            // Children come after their parent; anything else is ignored, never looped on.
            if (child > k && child < count) {
                node_weight[child] += w * cw[c];
            }
        }
    }
    return leaves;
}
