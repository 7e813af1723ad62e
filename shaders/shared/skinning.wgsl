// Linear blend skinning, for the built-in renderer and for users' own vertex shaders
// (exported as wgpu_anim::shaders::SKIN_FUNCTIONS together with types.wgsl and math.wgsl).
// The including module must declare the palette buffer as
//     @group(G) @binding(B) var<storage, read> palettes: array<Affine>;
// Rust mirror: cpu::skin_vertex.

// Weighted sum of up to four skinning matrices of the palette starting at `offset`.
fn skin_blend(offset: u32, joints: vec4<u32>, weights: vec4<f32>) -> Affine {
    let a = palettes[offset + joints.x];
    let b = palettes[offset + joints.y];
    let c = palettes[offset + joints.z];
    let d = palettes[offset + joints.w];
    return Affine(
        a.x * weights.x + b.x * weights.y + c.x * weights.z + d.x * weights.w,
        a.y * weights.x + b.y * weights.y + c.y * weights.z + d.y * weights.w,
        a.z * weights.x + b.z * weights.y + c.z * weights.z + d.z * weights.w,
    );
}

fn affine_transform_point(m: Affine, p: vec3<f32>) -> vec3<f32> {
    let v = vec4<f32>(p, 1.0);
    return vec3<f32>(dot(m.x, v), dot(m.y, v), dot(m.z, v));
}

// A normal through the inverse transpose of m's 3x3 part (its cofactor matrix, which differs only
// by the positive factor |det|, sign-corrected for mirroring), so non-uniform scale is handled.
// The result is not normalized.
fn affine_transform_normal(m: Affine, n: vec3<f32>) -> vec3<f32> {
    let c0 = vec3<f32>(m.x.x, m.y.x, m.z.x);
    let c1 = vec3<f32>(m.x.y, m.y.y, m.z.y);
    let c2 = vec3<f32>(m.x.z, m.y.z, m.z.z);
    let cof = cross(c1, c2) * n.x + cross(c2, c0) * n.y + cross(c0, c1) * n.z;
    if (dot(c0, cross(c1, c2)) < 0.0) {
        return -cof;
    }
    return cof;
}

struct SkinnedPoint {
    position: vec3<f32>,
    normal: vec3<f32>,
}

// A bind-pose vertex skinned by the palette at `offset`: model-space position and unit normal.
fn skin_vertex(offset: u32, joints: vec4<u32>, weights: vec4<f32>, position: vec3<f32>, normal: vec3<f32>) -> SkinnedPoint {
    let k = skin_blend(offset, joints, weights);
    return SkinnedPoint(affine_transform_point(k, position), normalize(affine_transform_normal(k, normal)));
}
