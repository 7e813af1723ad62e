#define_import_path wgpu_anim::skinning

// Skinning for a vertex shader of your own (Rust: wgpu_anim::gpu::SkinBinding); the built-in
// renderer (skin.wgsl) imports it too. It declares only what skinning needs, every name starting
// with wgpu_anim_, so it joins any shader: imported with naga_oil
// (`#import wgpu_anim::skinning::{wgpu_anim_skin, ...}`, with SkinBinding::shader_defs), or
// pasted as plain text (SkinBinding::wgsl, with the numbers filled in). The defs:
// WGPU_ANIM_SKIN_GROUP, WGPU_ANIM_PALETTE_BINDING and WGPU_ANIM_INSTANCE_BINDING place the
// bindings, WGPU_ANIM_VERTEX_LOCATION the vertex inputs; with WGPU_ANIM_PREVIOUS_PALETTE the
// module also binds last frame's palettes (WGPU_ANIM_PREVIOUS_BINDING) and gives each vertex's
// previous position, for motion vectors (with dual quaternions too, last frame's at
// WGPU_ANIM_PREVIOUS_DUAL_BINDING); with WGPU_ANIM_DUAL_QUATERNION it binds the dual
// quaternions (WGPU_ANIM_DUAL_BINDING) and skins each instance as it says: linear blending, dual
// quaternions or a blend; with WGPU_ANIM_DUAL_RIGID too, for a library without scale, the dual
// quaternions skip their stretch phase; with WGPU_ANIM_MORPH it binds the page's morph weights
// (WGPU_ANIM_MORPH_WEIGHTS_BINDING) and a mesh's morph targets (WGPU_ANIM_MORPH_TARGETS_BINDING)
// and morphs a vertex before it is skinned (wgpu_anim_morph); with WGPU_ANIM_VAT it binds a
// mesh's vertex animation texture (WGPU_ANIM_VAT_BINDING) and plays it (wgpu_anim_vat). With naga_oil, import the functions (and structs), not
// the storage variables: a variable imported by name and also used by an imported function is
// declared twice.
//
// Every struct, binding and function below is documented, with its signature, in the crate's
// rustdoc (wgpu_anim::shaders::skinning_module, from shaders/skinning_module.md); a test fails
// when that page and this file disagree.

// A 3x4 affine matrix, row-major (Rust: math::Affine, 48 bytes): a point p maps to
// (dot(x, p1), dot(y, p1), dot(z, p1)) with p1 = vec4(p, 1).
struct wgpu_anim_Affine {
    x: vec4<f32>,
    y: vec4<f32>,
    z: vec4<f32>,
}

// One instance as drawing reads it: the 320 bytes of Rust's layout::GpuInstance, of which only
// the palette offset, the world transform and the tint are named. (Padding by arrays, not @size:
// naga's WGSL writer drops @size, so a shader written back would lose the layout.)
struct wgpu_anim_Instance {
    not_drawn_a: vec2<u32>,
    // The instance's first joint in the palette buffer of its page (byte 8).
    joint_offset: u32,
    not_drawn_b: array<u32, 21>,
    // Model space to world space (byte 96).
    world: wgpu_anim_Affine,
    // RGBA8, red in the low byte (byte 144).
    tint: u32,
    not_drawn_c: u32,
    // How much of the skinning is by dual quaternions: 0 linear, 1 dual quaternions (byte 152).
    dual_quaternion: f32,
    // The amount the frame before skinned with (byte 156).
    previous_dual_quaternion: f32,
    not_drawn_d: array<u32, 16>,
    // Where its morph weights start in the page's weights (byte 224), and how many are in use
    // (byte 228; 0: it does not morph).
    morph_offset: u32,
    morph_count: u32,
    not_drawn_e: array<u32, 4>,
    // With a VAT draw: 1 + the clip it plays (0: none), and the clip time (bytes 248 and 252),
    // which the clock stage writes.
    vat: u32,
    vat_time: f32,
    not_drawn_f: array<u32, 16>,
}

// An instance of the page being drawn: its index in the page, which is `@builtin(instance_index)`
// in a draw made by SkinBinding::draw (one draw per page, counting from 0 in each). A struct, not
// a bare u32, so that a u32 meant as something else (a joint offset, as the first argument of
// the old skin_vertex; a global instance index) does not validate.
struct wgpu_anim_PageInstance {
    index: u32,
}

// A bind-pose vertex as a SkinVertex buffer feeds it (Rust: mesh::SkinVertex::attributes, at
// WGPU_ANIM_VERTEX_LOCATION and the four locations after it).
struct wgpu_anim_Vertex {
    @location(#{WGPU_ANIM_VERTEX_LOCATION}) position: vec3<f32>,
    @location(#{WGPU_ANIM_VERTEX_LOCATION} + 1) normal: vec3<f32>,
    @location(#{WGPU_ANIM_VERTEX_LOCATION} + 2) uv: vec2<f32>,
    // Joint indices in the instance's skeleton (Uint16x4).
    @location(#{WGPU_ANIM_VERTEX_LOCATION} + 3) joints: vec4<u32>,
    @location(#{WGPU_ANIM_VERTEX_LOCATION} + 4) weights: vec4<f32>,
}

// The palette (skinning matrices) and the instances of one page of an animator.
@group(#{WGPU_ANIM_SKIN_GROUP}) @binding(#{WGPU_ANIM_PALETTE_BINDING})
var<storage, read> wgpu_anim_palettes: array<wgpu_anim_Affine>;
@group(#{WGPU_ANIM_SKIN_GROUP}) @binding(#{WGPU_ANIM_INSTANCE_BINDING})
var<storage, read> wgpu_anim_instances: array<wgpu_anim_Instance>;

#ifdef WGPU_ANIM_VISIBLE
// The page's lists of the instances the frame evaluated and drew (culling; Rust:
// layout::GpuVisibleHead, 64 bytes, then a page index each).
struct wgpu_anim_Visible {
    not_drawn: array<u32, 9>,
    // How many are drawn: a culled draw's instance count (byte 36).
    drawn_count: u32,
    // Where the drawn list starts in `list` (byte 40).
    drawn_offset: u32,
    // How many are drawn with their VAT: a VAT draw's instance count (byte 44); their list runs
    // backwards from entry 2 * drawn_offset - 1. Every instance's marks follow from
    // 2 * drawn_offset.
    vat_count: u32,
    not_drawn_b: array<u32, 4>,
    list: array<u32>,
}

@group(#{WGPU_ANIM_SKIN_GROUP}) @binding(#{WGPU_ANIM_VISIBLE_BINDING})
var<storage, read> wgpu_anim_visible: wgpu_anim_Visible;

// The instance a culled draw (SkinBinding::draw_visible) draws as its `instance_index`-th.
fn wgpu_anim_visible_instance(instance_index: u32) -> wgpu_anim_PageInstance {
    return wgpu_anim_PageInstance(wgpu_anim_visible.list[wgpu_anim_visible.drawn_offset + instance_index]);
}

#ifdef WGPU_ANIM_VAT
// The instance a VAT draw (a culled draw with CulledDraws::for_vat) draws as its
// `instance_index`-th.
fn wgpu_anim_vat_instance(instance_index: u32) -> wgpu_anim_PageInstance {
    return wgpu_anim_PageInstance(wgpu_anim_visible.list[2u * wgpu_anim_visible.drawn_offset - 1u - instance_index]);
}
#endif

// How often the animator evaluates the pose `instance` is drawn with (update-rate LOD,
// Controller::set_update_rates): every 1, 2, 4 or 8 frames; 0 for an instance the frame does not
// draw skinned (out of view, or drawn with its VAT).
fn wgpu_anim_update_rate(instance: wgpu_anim_PageInstance) -> u32 {
    // MARK_DRAWN is 2, the rate's log2 the two bits from MARK_RATE_SHIFT, 4 (Rust: layout).
    let marks = wgpu_anim_visible.list[2u * wgpu_anim_visible.drawn_offset + instance.index];
    return select(0u, 1u << ((marks >> 4u) & 3u), (marks & 2u) != 0u);
}
#endif

#ifdef WGPU_ANIM_VAT
// A mesh's vertex animation texture (Rust: gpu::GpuVat; its words: vat::Vat::gpu_words): a head of
// 12 words (vertex count, table length, first word of the frames, 0; the box's corner; its step),
// a table of 4 words per library clip (first frame, frame count, duration, 0), then per frame
// and vertex two words (the quantized position, the octahedron-encoded normal).
@group(#{WGPU_ANIM_SKIN_GROUP}) @binding(#{WGPU_ANIM_VAT_BINDING})
var<storage, read> wgpu_anim_vat_words: array<u32>;

// The unit normal of octahedron-encoded 8-bit `x` and `y`. Rust: vat::decode_normal.
fn wgpu_anim_vat_normal(x: u32, y: u32) -> vec3<f32> {
    let f = vec2<f32>(f32(x), f32(y)) / 255.0 * 2.0 - 1.0;
    let z = 1.0 - abs(f.x) - abs(f.y);
    let t = max(-z, 0.0);
    let s = select(vec2<f32>(-1.0), vec2<f32>(1.0), f >= vec2<f32>(0.0));
    return normalize(vec3<f32>(f - t * s, z));
}

// Vertex `vertex` of the VAT's frame `frame` (counting over every clip): its position and unit
// normal in model space. Rust: vat::decode_vertex.
fn wgpu_anim_vat_decode(frame: u32, vertex: u32) -> wgpu_anim_Skinned {
    let count = wgpu_anim_vat_words[0];
    let w = wgpu_anim_vat_words[2] + 2u * (frame * count + vertex);
    let a = wgpu_anim_vat_words[w];
    let b = wgpu_anim_vat_words[w + 1u];
    let corner = vec3<f32>(bitcast<f32>(wgpu_anim_vat_words[4]), bitcast<f32>(wgpu_anim_vat_words[5]), bitcast<f32>(wgpu_anim_vat_words[6]));
    let step = vec3<f32>(bitcast<f32>(wgpu_anim_vat_words[8]), bitcast<f32>(wgpu_anim_vat_words[9]), bitcast<f32>(wgpu_anim_vat_words[10]));
    let q = vec3<f32>(f32(a & 0xffffu), f32(a >> 16u), f32(b & 0xffffu));
    return wgpu_anim_Skinned(corner + q * step, wgpu_anim_vat_normal((b >> 16u) & 0xffu, b >> 24u));
}

// Vertex `vertex` of library clip `clip` played at `time` seconds (clamped to the clip): the two
// frames around it lerped, the normal normalized; at the origin for a clip the VAT does not hold
// or a vertex past its mesh. Rust: vat::Vat::vertex.
fn wgpu_anim_vat_at(clip: u32, time: f32, vertex: u32) -> wgpu_anim_Skinned {
    let table = 12u + 4u * clip;
    if (clip >= wgpu_anim_vat_words[1] || vertex >= wgpu_anim_vat_words[0] || wgpu_anim_vat_words[table + 1u] == 0u) {
        return wgpu_anim_Skinned(vec3<f32>(0.0), vec3<f32>(0.0, 1.0, 0.0));
    }
    let first = wgpu_anim_vat_words[table];
    let frames = wgpu_anim_vat_words[table + 1u];
    let duration = bitcast<f32>(wgpu_anim_vat_words[table + 2u]);
    if (frames < 2u || !(duration > 0.0)) {
        return wgpu_anim_vat_decode(first, vertex);
    }
    let last = f32(frames - 1u);
    let u = clamp(time / duration, 0.0, 1.0) * last;
    let k = min(floor(u), last - 1.0);
    let s = u - k;
    let a = wgpu_anim_vat_decode(first + u32(k), vertex);
    let b = wgpu_anim_vat_decode(first + u32(k) + 1u, vertex);
    return wgpu_anim_Skinned(mix(a.position, b.position, s), normalize(mix(a.normal, b.normal, s)));
}

// Vertex `vertex` of instance `instance` drawn with its VAT: the clip it plays at the time its
// clock stage left (Instance.vat, vat_time), in model space.
fn wgpu_anim_vat(instance: wgpu_anim_PageInstance, vertex: u32) -> wgpu_anim_Skinned {
    let i = wgpu_anim_instances[instance.index];
    return wgpu_anim_vat_at(max(i.vat, 1u) - 1u, i.vat_time, vertex);
}
#endif

// The weighted sum of four matrices.
fn wgpu_anim_blend4(a: wgpu_anim_Affine, b: wgpu_anim_Affine, c: wgpu_anim_Affine, d: wgpu_anim_Affine, weights: vec4<f32>) -> wgpu_anim_Affine {
    return wgpu_anim_Affine(
        a.x * weights.x + b.x * weights.y + c.x * weights.z + d.x * weights.w,
        a.y * weights.x + b.y * weights.y + c.y * weights.z + d.y * weights.w,
        a.z * weights.x + b.z * weights.y + c.z * weights.z + d.z * weights.w,
    );
}

#ifdef WGPU_ANIM_PREVIOUS_PALETTE
// Last frame's palettes (Rust: Animator::keep_previous_palettes).
@group(#{WGPU_ANIM_SKIN_GROUP}) @binding(#{WGPU_ANIM_PREVIOUS_BINDING})
var<storage, read> wgpu_anim_previous_palettes: array<wgpu_anim_Affine>;

#ifdef WGPU_ANIM_DUAL_QUATERNION
// Last frame's dual quaternions (kept with the previous palettes when the animator keeps them).
@group(#{WGPU_ANIM_SKIN_GROUP}) @binding(#{WGPU_ANIM_PREVIOUS_DUAL_BINDING})
var<storage, read> wgpu_anim_previous_dual_palettes: array<wgpu_anim_DualQuat>;

// Entry `i` of last frame's dual quaternions, as wgpu_anim_dual_load reads this frame's.
fn wgpu_anim_previous_dual_load(i: u32) -> wgpu_anim_DualQuat {
#ifdef WGPU_ANIM_DUAL_RIGID
    return wgpu_anim_DualQuat(wgpu_anim_previous_dual_palettes[i].real, wgpu_anim_previous_dual_palettes[i].dual, vec4<f32>(0.0), vec4<f32>(0.0));
#else
    return wgpu_anim_previous_dual_palettes[i];
#endif
}
#endif

// A bind-pose vertex position skinned by last frame's palettes (and dual quaternions, as the
// instance skinned then), in model space.
fn wgpu_anim_previous_position(instance: wgpu_anim_PageInstance, joints: vec4<u32>, weights: vec4<f32>, position: vec3<f32>) -> vec3<f32> {
    let offset = wgpu_anim_instances[instance.index].joint_offset;
    let m = wgpu_anim_blend4(
        wgpu_anim_previous_palettes[offset + joints.x],
        wgpu_anim_previous_palettes[offset + joints.y],
        wgpu_anim_previous_palettes[offset + joints.z],
        wgpu_anim_previous_palettes[offset + joints.w],
        weights,
    );
    let linear = wgpu_anim_transform_point(m, position);
#ifdef WGPU_ANIM_DUAL_QUATERNION
    let amount = wgpu_anim_instances[instance.index].previous_dual_quaternion;
    if (amount > 0.0) {
        let i = vec4<u32>(offset) + joints;
        let b = wgpu_anim_dual_blend(
            wgpu_anim_previous_dual_load(i.x),
            wgpu_anim_previous_dual_load(i.y),
            wgpu_anim_previous_dual_load(i.z),
            wgpu_anim_previous_dual_load(i.w),
            weights,
        );
        let dual = wgpu_anim_dual_transform_point(b, position);
        if (amount >= 1.0) {
            return dual;
        }
        return mix(linear, dual, amount);
    }
#endif
    return linear;
}
#endif

// Weighted sum of up to four skinning matrices of the palette entries from `offset` (a joint
// offset: the first palette entry of an instance). Rust mirror: cpu::skin_vertex.
fn wgpu_anim_skin_matrix_at(offset: u32, joints: vec4<u32>, weights: vec4<f32>) -> wgpu_anim_Affine {
    return wgpu_anim_blend4(
        wgpu_anim_palettes[offset + joints.x],
        wgpu_anim_palettes[offset + joints.y],
        wgpu_anim_palettes[offset + joints.z],
        wgpu_anim_palettes[offset + joints.w],
        weights,
    );
}

// Weighted sum of up to four skinning matrices of instance `instance`.
fn wgpu_anim_skin_matrix(instance: wgpu_anim_PageInstance, joints: vec4<u32>, weights: vec4<f32>) -> wgpu_anim_Affine {
    return wgpu_anim_skin_matrix_at(wgpu_anim_instances[instance.index].joint_offset, joints, weights);
}

// A point through m.
fn wgpu_anim_transform_point(m: wgpu_anim_Affine, p: vec3<f32>) -> vec3<f32> {
    let v = vec4<f32>(p, 1.0);
    return vec3<f32>(dot(m.x, v), dot(m.y, v), dot(m.z, v));
}

// A direction (a tangent) through m's 3x3 part.
fn wgpu_anim_transform_direction(m: wgpu_anim_Affine, d: vec3<f32>) -> vec3<f32> {
    return vec3<f32>(dot(m.x.xyz, d), dot(m.y.xyz, d), dot(m.z.xyz, d));
}

// A normal through the inverse transpose of m's 3x3 part (its cofactor matrix, sign-corrected
// for mirroring), so non-uniform scale is handled. Not normalized.
fn wgpu_anim_transform_normal(m: wgpu_anim_Affine, n: vec3<f32>) -> vec3<f32> {
    let c0 = vec3<f32>(m.x.x, m.y.x, m.z.x);
    let c1 = vec3<f32>(m.x.y, m.y.y, m.z.y);
    let c2 = vec3<f32>(m.x.z, m.y.z, m.z.z);
    let cof = cross(c1, c2) * n.x + cross(c2, c0) * n.y + cross(c0, c1) * n.z;
    if (dot(c0, cross(c1, c2)) < 0.0) {
        return -cof;
    }
    return cof;
}

// The instance's world transform (model space to world space).
fn wgpu_anim_world(instance: wgpu_anim_PageInstance) -> wgpu_anim_Affine {
    return wgpu_anim_instances[instance.index].world;
}

// The instance's world transform as a column-major matrix, for view-projection products.
fn wgpu_anim_world_matrix(instance: wgpu_anim_PageInstance) -> mat4x4<f32> {
    let m = wgpu_anim_instances[instance.index].world;
    return transpose(mat4x4<f32>(m.x, m.y, m.z, vec4<f32>(0.0, 0.0, 0.0, 1.0)));
}

// The instance's tint (InstanceDesc::tint), RGBA in 0..1.
fn wgpu_anim_tint(instance: wgpu_anim_PageInstance) -> vec4<f32> {
    return unpack4x8unorm(wgpu_anim_instances[instance.index].tint);
}

// A skinned vertex in model space: position and unit normal.
struct wgpu_anim_Skinned {
    position: vec3<f32>,
    normal: vec3<f32>,
}

// Skins a bind-pose vertex of instance `instance` with up to four influences (weights summing
// to 1; unused influences have weight 0): its position and normal, for a mesh without tangents.
fn wgpu_anim_skin(
    instance: wgpu_anim_PageInstance,
    joints: vec4<u32>,
    weights: vec4<f32>,
    position: vec3<f32>,
    normal: vec3<f32>,
) -> wgpu_anim_Skinned {
#ifdef WGPU_ANIM_DUAL_QUATERNION
    let amount = wgpu_anim_dual_amount(instance);
    if (amount > 0.0) {
        let s = wgpu_anim_skin_blended(instance, joints, weights, position, normal, vec4<f32>(1.0, 0.0, 0.0, 1.0), amount);
        return wgpu_anim_Skinned(s.position, s.normal);
    }
#endif
    let m = wgpu_anim_skin_matrix(instance, joints, weights);
    return wgpu_anim_Skinned(
        wgpu_anim_transform_point(m, position),
        normalize(wgpu_anim_transform_normal(m, normal)),
    );
}

// A skinned vertex in model space with its tangent: position, unit normal and unit tangent (w:
// the bitangent sign, passed through).
struct wgpu_anim_SkinnedWithTangent {
    position: vec3<f32>,
    normal: vec3<f32>,
    tangent: vec4<f32>,
}

// As wgpu_anim_skin, and the tangent too (xyz through the skinning matrix, w passed through),
// for normal mapping.
fn wgpu_anim_skin_with_tangent(
    instance: wgpu_anim_PageInstance,
    joints: vec4<u32>,
    weights: vec4<f32>,
    position: vec3<f32>,
    normal: vec3<f32>,
    tangent: vec4<f32>,
) -> wgpu_anim_SkinnedWithTangent {
#ifdef WGPU_ANIM_DUAL_QUATERNION
    return wgpu_anim_skin_blended(instance, joints, weights, position, normal, tangent, wgpu_anim_dual_amount(instance));
#else
    return wgpu_anim_skin_linear_at(wgpu_anim_instances[instance.index].joint_offset, joints, weights, position, normal, tangent);
#endif
}

// Linear blend skinning of a vertex by the palette entries from `offset`: position, unit normal
// and unit tangent (w passed through). Rust mirror: cpu::skin_vertex.
fn wgpu_anim_skin_linear_at(
    offset: u32,
    joints: vec4<u32>,
    weights: vec4<f32>,
    position: vec3<f32>,
    normal: vec3<f32>,
    tangent: vec4<f32>,
) -> wgpu_anim_SkinnedWithTangent {
    let m = wgpu_anim_skin_matrix_at(offset, joints, weights);
    return wgpu_anim_SkinnedWithTangent(
        wgpu_anim_transform_point(m, position),
        normalize(wgpu_anim_transform_normal(m, normal)),
        vec4<f32>(normalize(wgpu_anim_transform_direction(m, tangent.xyz)), tangent.w),
    );
}

#ifdef WGPU_ANIM_DUAL_QUATERNION
// A skinning matrix K = [R S | t] as a unit dual quaternion of its rigid motion (R, t) and its
// symmetric stretch S (scale and shear): K p = R (S p) + t (Rust: math::DualQuat, 64 bytes).
struct wgpu_anim_DualQuat {
    real: vec4<f32>,
    dual: vec4<f32>,
    // S's diagonal (xx, yy, zz) and its other elements (xy, xz, yz).
    stretch_diagonal: vec4<f32>,
    stretch_off: vec4<f32>,
}

// The dual quaternions of one page of an animator, laid out as wgpu_anim_palettes (Rust:
// Animator::page_dual_palette_buffer), written for the instances that skin with them.
@group(#{WGPU_ANIM_SKIN_GROUP}) @binding(#{WGPU_ANIM_DUAL_BINDING})
var<storage, read> wgpu_anim_dual_palettes: array<wgpu_anim_DualQuat>;

// Up to four joints' skinning blended as dual quaternions: the rigid motions' dual quaternions
// summed by weight (each turned to the heaviest influence's hemisphere) and normalized, the
// stretches summed by weight.
struct wgpu_anim_DualBlend {
    real: vec4<f32>,
    dual: vec4<f32>,
    stretch: mat3x3<f32>,
}

// The instance's dual-quaternion amount (Rust: Skinning): 0 linear, 1 dual quaternions.
fn wgpu_anim_dual_amount(instance: wgpu_anim_PageInstance) -> f32 {
    return wgpu_anim_instances[instance.index].dual_quaternion;
}

// v rotated by the unit quaternion q (x, y, z, w).
fn wgpu_anim_quat_rotate(q: vec4<f32>, v: vec3<f32>) -> vec3<f32> {
    let u = cross(q.xyz, v) * 2.0;
    return v + u * q.w + cross(q.xyz, u);
}

// Entry `i` of the dual quaternions (with WGPU_ANIM_DUAL_RIGID only its rotation and
// translation are read; the stretch is left zero).
fn wgpu_anim_dual_load(i: u32) -> wgpu_anim_DualQuat {
#ifdef WGPU_ANIM_DUAL_RIGID
    return wgpu_anim_DualQuat(wgpu_anim_dual_palettes[i].real, wgpu_anim_dual_palettes[i].dual, vec4<f32>(0.0), vec4<f32>(0.0));
#else
    return wgpu_anim_dual_palettes[i];
#endif
}

// Four joints' dual quaternions blended (Kavan et al. 2008, two-phase): the rigid parts summed by
// weight, each turned to the heaviest influence's hemisphere, and normalized; the stretches summed
// by weight. Rust mirror: cpu::dual_blend.
fn wgpu_anim_dual_blend(a: wgpu_anim_DualQuat, b: wgpu_anim_DualQuat, c: wgpu_anim_DualQuat, d: wgpu_anim_DualQuat, weights: vec4<f32>) -> wgpu_anim_DualBlend {
    // q and -q are the same rotation: align every influence with the heaviest one.
    var pivot = a.real;
    var top = weights.x;
    if (weights.y > top) {
        pivot = b.real;
        top = weights.y;
    }
    if (weights.z > top) {
        pivot = c.real;
        top = weights.z;
    }
    if (weights.w > top) {
        pivot = d.real;
    }
    let w = vec4<f32>(
        select(weights.x, -weights.x, dot(a.real, pivot) < 0.0),
        select(weights.y, -weights.y, dot(b.real, pivot) < 0.0),
        select(weights.z, -weights.z, dot(c.real, pivot) < 0.0),
        select(weights.w, -weights.w, dot(d.real, pivot) < 0.0),
    );
    let real = a.real * w.x + b.real * w.y + c.real * w.z + d.real * w.w;
    let dual = a.dual * w.x + b.dual * w.y + c.dual * w.z + d.dual * w.w;
    let len = length(real);
    let inv = select(0.0, 1.0 / len, len > 0.0);
#ifdef WGPU_ANIM_DUAL_RIGID
    // No joint scales or shears (AnimationLibrary::has_scale): the stretch is the identity.
    let stretch = mat3x3<f32>(vec3<f32>(1.0, 0.0, 0.0), vec3<f32>(0.0, 1.0, 0.0), vec3<f32>(0.0, 0.0, 1.0));
#else
    let sd = a.stretch_diagonal * weights.x + b.stretch_diagonal * weights.y + c.stretch_diagonal * weights.z
        + d.stretch_diagonal * weights.w;
    let so = a.stretch_off * weights.x + b.stretch_off * weights.y + c.stretch_off * weights.z + d.stretch_off * weights.w;
    let stretch = mat3x3<f32>(
        vec3<f32>(sd.x, so.x, so.y),
        vec3<f32>(so.x, sd.y, so.z),
        vec3<f32>(so.y, so.z, sd.z),
    );
#endif
    return wgpu_anim_DualBlend(real * inv, dual * inv, stretch);
}

// The dual-quaternion blend of up to four entries of the dual palettes from `offset`.
fn wgpu_anim_dual_blend_at(offset: u32, joints: vec4<u32>, weights: vec4<f32>) -> wgpu_anim_DualBlend {
    let i = vec4<u32>(offset) + joints;
    return wgpu_anim_dual_blend(wgpu_anim_dual_load(i.x), wgpu_anim_dual_load(i.y), wgpu_anim_dual_load(i.z), wgpu_anim_dual_load(i.w), weights);
}

// A point through a dual-quaternion blend: stretched, rotated, translated.
fn wgpu_anim_dual_transform_point(b: wgpu_anim_DualBlend, p: vec3<f32>) -> vec3<f32> {
    let r = b.real;
    let d = b.dual;
    let t = (r.w * d.xyz - d.w * r.xyz + cross(r.xyz, d.xyz)) * 2.0;
#ifdef WGPU_ANIM_DUAL_RIGID
    return wgpu_anim_quat_rotate(r, p) + t;
#else
    return wgpu_anim_quat_rotate(r, b.stretch * p) + t;
#endif
}

// A direction (a tangent) through a dual-quaternion blend; not normalized.
fn wgpu_anim_dual_transform_direction(b: wgpu_anim_DualBlend, v: vec3<f32>) -> vec3<f32> {
#ifdef WGPU_ANIM_DUAL_RIGID
    return wgpu_anim_quat_rotate(b.real, v);
#else
    return wgpu_anim_quat_rotate(b.real, b.stretch * v);
#endif
}

// A normal through a dual-quaternion blend: the stretch's cofactor (as wgpu_anim_transform_normal),
// then the rotation; not normalized.
fn wgpu_anim_dual_transform_normal(b: wgpu_anim_DualBlend, n: vec3<f32>) -> vec3<f32> {
#ifdef WGPU_ANIM_DUAL_RIGID
    return wgpu_anim_quat_rotate(b.real, n);
#else
    let s = wgpu_anim_Affine(vec4<f32>(b.stretch[0], 0.0), vec4<f32>(b.stretch[1], 0.0), vec4<f32>(b.stretch[2], 0.0));
    return wgpu_anim_quat_rotate(b.real, wgpu_anim_transform_normal(s, n));
#endif
}

// A vertex skinned `amount` by dual quaternions and `1 - amount` by linear blending, from the
// palette entries from `offset`: 0 is linear blend skinning alone, 1 dual quaternions alone,
// between the two results mixed (normal and tangent normalized after). Rust mirror:
// cpu::skin_vertex_blended.
fn wgpu_anim_skin_blended_at(
    offset: u32,
    joints: vec4<u32>,
    weights: vec4<f32>,
    position: vec3<f32>,
    normal: vec3<f32>,
    tangent: vec4<f32>,
    amount: f32,
) -> wgpu_anim_SkinnedWithTangent {
    if (!(amount > 0.0)) {
        return wgpu_anim_skin_linear_at(offset, joints, weights, position, normal, tangent);
    }
    let b = wgpu_anim_dual_blend_at(offset, joints, weights);
    let dual = wgpu_anim_SkinnedWithTangent(
        wgpu_anim_dual_transform_point(b, position),
        normalize(wgpu_anim_dual_transform_normal(b, normal)),
        vec4<f32>(normalize(wgpu_anim_dual_transform_direction(b, tangent.xyz)), tangent.w),
    );
    if (amount >= 1.0) {
        return dual;
    }
    let linear = wgpu_anim_skin_linear_at(offset, joints, weights, position, normal, tangent);
    return wgpu_anim_SkinnedWithTangent(
        mix(linear.position, dual.position, amount),
        normalize(mix(linear.normal, dual.normal, amount)),
        vec4<f32>(normalize(mix(linear.tangent.xyz, dual.tangent.xyz, amount)), tangent.w),
    );
}

// As wgpu_anim_skin_blended_at, for instance `instance`: `amount` from a vertex attribute of
// yours, say, or wgpu_anim_dual_amount(instance).
fn wgpu_anim_skin_blended(
    instance: wgpu_anim_PageInstance,
    joints: vec4<u32>,
    weights: vec4<f32>,
    position: vec3<f32>,
    normal: vec3<f32>,
    tangent: vec4<f32>,
    amount: f32,
) -> wgpu_anim_SkinnedWithTangent {
    return wgpu_anim_skin_blended_at(wgpu_anim_instances[instance.index].joint_offset, joints, weights, position, normal, tangent, amount);
}
#endif

#ifdef WGPU_ANIM_MORPH
// The morph weights of one page of an animator (Rust: Animator::page_morph_weight_buffer):
// instance i's from wgpu_anim_instances[i].morph_offset, wgpu_anim_instances[i].morph_count of
// them.
@group(#{WGPU_ANIM_SKIN_GROUP}) @binding(#{WGPU_ANIM_MORPH_WEIGHTS_BINDING})
var<storage, read> wgpu_anim_morph_weights: array<f32>;
// One mesh's morph targets, sparse and vertex-major (Rust: MorphSet, GpuMorphTargets): a header
// (vertex count, target count, words per entry, first entry word), each vertex's entry range
// (two vertices per word), then the entries: (position delta, target), (normal delta, 0) and,
// with three words per entry, (tangent delta, 0), the deltas as f32 bits.
@group(#{WGPU_ANIM_SKIN_GROUP}) @binding(#{WGPU_ANIM_MORPH_TARGETS_BINDING})
var<storage, read> wgpu_anim_morph_targets: array<vec4<u32>>;

// A bind-pose vertex with its morph targets' displacements added: position, normal (not
// normalized) and tangent (xyz).
struct wgpu_anim_Morphed {
    position: vec3<f32>,
    normal: vec3<f32>,
    tangent: vec3<f32>,
}

// Vertex `vertex` (its index in the mesh: @builtin(vertex_index) of an indexed draw from vertex
// 0) of instance `instance`, morphed by the instance's weights: each target that moves the
// vertex and has a non-zero weight adds its displacements times the weight, in target order.
// An instance that does not morph (no weight in use), or a vertex past the targets' mesh, is
// returned as it is. Skin the result (wgpu_anim_skin ...). Rust mirror: cpu::morph.
fn wgpu_anim_morph(instance: wgpu_anim_PageInstance, vertex: u32, position: vec3<f32>, normal: vec3<f32>, tangent: vec3<f32>) -> wgpu_anim_Morphed {
    var out = wgpu_anim_Morphed(position, normal, tangent);
    let count = wgpu_anim_instances[instance.index].morph_count;
    if (count == 0u) {
        return out;
    }
    let header = wgpu_anim_morph_targets[0];
    if (vertex >= header.x) {
        return out;
    }
    let pair = wgpu_anim_morph_targets[1u + vertex / 2u];
    let range = select(pair.xy, pair.zw, (vertex & 1u) == 1u);
    let base = wgpu_anim_instances[instance.index].morph_offset;
    for (var k = 0u; k < range.y; k++) {
        let e = header.w + (range.x + k) * header.z;
        let head = wgpu_anim_morph_targets[e];
        // Entries are sorted by target: the rest weigh nothing.
        if (head.w >= count) {
            break;
        }
        let w = wgpu_anim_morph_weights[base + head.w];
        if (w == 0.0) {
            continue;
        }
        out.position += w * bitcast<vec3<f32>>(head.xyz);
        out.normal += w * bitcast<vec3<f32>>(wgpu_anim_morph_targets[e + 1u].xyz);
        if (header.z > 2u) {
            out.tangent += w * bitcast<vec3<f32>>(wgpu_anim_morph_targets[e + 2u].xyz);
        }
    }
    return out;
}
#endif
