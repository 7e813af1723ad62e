#define_import_path wgpu_anim::skinning

// Skinning for a vertex shader of your own (Rust: wgpu_anim::gpu::SkinBinding). It declares only
// what skinning needs, every name starting with wgpu_anim_, so it joins any shader: imported with
// naga_oil (`#import wgpu_anim::skinning::{wgpu_anim_skin, ...}`, the group and bindings given as
// the shader defs WGPU_ANIM_SKIN_GROUP, WGPU_ANIM_PALETTE_BINDING and WGPU_ANIM_INSTANCE_BINDING),
// or pasted as plain text (SkinBinding::wgsl, with the numbers filled in). With the def
// WGPU_ANIM_PREVIOUS_PALETTE it also binds last frame's palettes (WGPU_ANIM_PREVIOUS_BINDING) and
// gives each vertex's previous position, for motion vectors.

// A 3x4 affine matrix, row-major (Rust: math::Affine, 48 bytes): a point p maps to
// (dot(x, p1), dot(y, p1), dot(z, p1)) with p1 = vec4(p, 1).
struct wgpu_anim_Affine {
    x: vec4<f32>,
    y: vec4<f32>,
    z: vec4<f32>,
}

// One instance as drawing reads it: the 256 bytes of Rust's layout::GpuInstance, of which only
// the palette offset, the world transform and the tint are named.
struct wgpu_anim_Instance {
    @size(8) not_drawn_a: vec2<u32>,
    // The instance's first joint in the palette buffer of its page.
    joint_offset: u32,
    @size(84) not_drawn_b: u32,
    // Model space to world space.
    world: wgpu_anim_Affine,
    // RGBA8, red in the low byte.
    tint: u32,
    @size(108) not_drawn_c: u32,
}

// The palette (skinning matrices) and the instances of one page of an animator.
@group(#{WGPU_ANIM_SKIN_GROUP}) @binding(#{WGPU_ANIM_PALETTE_BINDING})
var<storage, read> wgpu_anim_palettes: array<wgpu_anim_Affine>;
@group(#{WGPU_ANIM_SKIN_GROUP}) @binding(#{WGPU_ANIM_INSTANCE_BINDING})
var<storage, read> wgpu_anim_instances: array<wgpu_anim_Instance>;

#ifdef WGPU_ANIM_PREVIOUS_PALETTE
// Last frame's palettes (Rust: Animator::keep_previous_palettes).
@group(#{WGPU_ANIM_SKIN_GROUP}) @binding(#{WGPU_ANIM_PREVIOUS_BINDING})
var<storage, read> wgpu_anim_previous_palettes: array<wgpu_anim_Affine>;

// A bind-pose vertex position skinned by last frame's palettes, in model space.
fn wgpu_anim_previous_position(instance: u32, joints: vec4<u32>, weights: vec4<f32>, position: vec3<f32>) -> vec3<f32> {
    let offset = wgpu_anim_instances[instance].joint_offset;
    let a = wgpu_anim_previous_palettes[offset + joints.x];
    let b = wgpu_anim_previous_palettes[offset + joints.y];
    let c = wgpu_anim_previous_palettes[offset + joints.z];
    let d = wgpu_anim_previous_palettes[offset + joints.w];
    let m = wgpu_anim_Affine(
        a.x * weights.x + b.x * weights.y + c.x * weights.z + d.x * weights.w,
        a.y * weights.x + b.y * weights.y + c.y * weights.z + d.y * weights.w,
        a.z * weights.x + b.z * weights.y + c.z * weights.z + d.z * weights.w,
    );
    return wgpu_anim_transform_point(m, position);
}
#endif

// Weighted sum of up to four skinning matrices of instance `instance` (its index in the page).
fn wgpu_anim_skin_matrix(instance: u32, joints: vec4<u32>, weights: vec4<f32>) -> wgpu_anim_Affine {
    let offset = wgpu_anim_instances[instance].joint_offset;
    let a = wgpu_anim_palettes[offset + joints.x];
    let b = wgpu_anim_palettes[offset + joints.y];
    let c = wgpu_anim_palettes[offset + joints.z];
    let d = wgpu_anim_palettes[offset + joints.w];
    return wgpu_anim_Affine(
        a.x * weights.x + b.x * weights.y + c.x * weights.z + d.x * weights.w,
        a.y * weights.x + b.y * weights.y + c.y * weights.z + d.y * weights.w,
        a.z * weights.x + b.z * weights.y + c.z * weights.z + d.z * weights.w,
    );
}

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

// The instance's world transform as a column-major matrix, for view-projection products.
fn wgpu_anim_world_matrix(instance: u32) -> mat4x4<f32> {
    let m = wgpu_anim_instances[instance].world;
    return transpose(mat4x4<f32>(m.x, m.y, m.z, vec4<f32>(0.0, 0.0, 0.0, 1.0)));
}

// A skinned vertex in model space: position, unit normal and unit tangent (w: the bitangent sign,
// passed through).
struct wgpu_anim_Skinned {
    position: vec3<f32>,
    normal: vec3<f32>,
    tangent: vec4<f32>,
}

// Skins a bind-pose vertex of instance `instance` with up to four influences (weights summing
// to 1; unused influences have weight 0).
fn wgpu_anim_skin(
    instance: u32,
    joints: vec4<u32>,
    weights: vec4<f32>,
    position: vec3<f32>,
    normal: vec3<f32>,
    tangent: vec4<f32>,
) -> wgpu_anim_Skinned {
    let m = wgpu_anim_skin_matrix(instance, joints, weights);
    return wgpu_anim_Skinned(
        wgpu_anim_transform_point(m, position),
        normalize(wgpu_anim_transform_normal(m, normal)),
        vec4<f32>(normalize(wgpu_anim_transform_direction(m, tangent.xyz)), tangent.w),
    );
}
