// Stage 5: skinning. `vs_main`/`fs_main` are the built-in instanced renderer: instance_index selects
// the instance's palette (its joint_offset) and world transform; one draw covers all characters
// of a mesh. `skin` is the same skinning as a compute pass that writes skinned points to a buffer,
// used to check the GPU against the CPU mirror (cpu::skin) and the conformance fixtures. Both
// skin with the module a renderer of the user's own imports, placed as
// gpu::SkinBinding::BUILT_IN places it (palettes at binding 1, instances at 2), or
// SkinBinding::BUILT_IN_DUAL for an animator that keeps dual quaternions (them at 4), with the
// morph weights and a mesh's morph targets at 6 and 7 for a mesh that morphs. With a mesh's
// VAT (at 9), `vs_vat` draws the characters a culling animator plays by it, and the compute
// entry `vat` plays one instance's VAT into the same buffer as `skin`, to check it.

#import wgpu_anim::types::{WORKGROUP_SIZE, SkinView}
#import wgpu_anim::skinning::{wgpu_anim_Vertex, wgpu_anim_PageInstance, wgpu_anim_world, wgpu_anim_tint, wgpu_anim_skin, wgpu_anim_skin_linear_at, wgpu_anim_transform_point, wgpu_anim_transform_normal}
#ifdef WGPU_ANIM_DUAL_QUATERNION
#import wgpu_anim::skinning::wgpu_anim_skin_blended_at
#endif
#ifdef WGPU_ANIM_MORPH
#import wgpu_anim::skinning::wgpu_anim_morph
#endif
#ifdef WGPU_ANIM_VISIBLE
#import wgpu_anim::skinning::{wgpu_anim_visible_instance, wgpu_anim_update_rate}
#endif
#ifdef WGPU_ANIM_VAT
#import wgpu_anim::skinning::{wgpu_anim_vat, wgpu_anim_vat_instance}
#endif

struct SkinJob {
    joint_offset: u32,
    vertex_count: u32,
    // The dual-quaternion amount (with WGPU_ANIM_DUAL_QUATERNION): 0 linear, 1 dual quaternions.
    dual_amount: f32,
    // The instance in the page (with WGPU_ANIM_MORPH: whose morph weights move the vertices).
    instance: u32,
}

struct SkinnedOut {
    position: vec4<f32>,
    normal: vec4<f32>,
}

// The camera, then the LOD tint's switch (Rust: layout::SkinView, declared there).
@group(0) @binding(0) var<uniform> skin_view: SkinView;
// Bindings 1 to 7: the skinning module's (palettes, instances, previous palettes, dual
// quaternions, previous dual quaternions, morph weights, morph targets).
@group(0) @binding(8) var<uniform> job: SkinJob;
@group(0) @binding(9) var<storage, read> vertex_words: array<u32>;
@group(0) @binding(10) var<storage, read_write> skinned: array<SkinnedOut>;

// The vertex a thread of a compute entry works on: workgroups may be split over x and y
// (gpu::split_dispatch).
fn job_vertex(wg: vec3<u32>, groups: vec3<u32>, lid: u32) -> u32 {
    return (wg.y * groups.x + wg.x) * WORKGROUP_SIZE + lid;
}

// Rust: mesh::SkinVertex, 14 words.
const VERTEX_WORDS: u32 = 14u;

@compute @workgroup_size(WORKGROUP_SIZE)
fn skin(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let v = job_vertex(wg, groups, lid);
    if (v >= job.vertex_count) {
        return;
    }
    let w = v * VERTEX_WORDS;
    var position = vec3<f32>(bitcast<f32>(vertex_words[w]), bitcast<f32>(vertex_words[w + 1u]), bitcast<f32>(vertex_words[w + 2u]));
    var normal = vec3<f32>(bitcast<f32>(vertex_words[w + 3u]), bitcast<f32>(vertex_words[w + 4u]), bitcast<f32>(vertex_words[w + 5u]));
    let j01 = vertex_words[w + 8u];
    let j23 = vertex_words[w + 9u];
    let joints = vec4<u32>(j01 & 0xffffu, j01 >> 16u, j23 & 0xffffu, j23 >> 16u);
    let weights = vec4<f32>(
        bitcast<f32>(vertex_words[w + 10u]),
        bitcast<f32>(vertex_words[w + 11u]),
        bitcast<f32>(vertex_words[w + 12u]),
        bitcast<f32>(vertex_words[w + 13u]),
    );
    let tangent = vec4<f32>(1.0, 0.0, 0.0, 1.0);
#ifdef WGPU_ANIM_MORPH
    let morphed = wgpu_anim_morph(wgpu_anim_PageInstance(job.instance), v, position, normal, tangent.xyz);
    position = morphed.position;
    normal = morphed.normal;
#endif
#ifdef WGPU_ANIM_DUAL_QUATERNION
    let s = wgpu_anim_skin_blended_at(job.joint_offset, joints, weights, position, normal, tangent, job.dual_amount);
#else
    let s = wgpu_anim_skin_linear_at(job.joint_offset, joints, weights, position, normal, tangent);
#endif
    skinned[v] = SkinnedOut(vec4<f32>(s.position, 1.0), vec4<f32>(s.normal, 0.0));
}

struct VertexOut {
    @builtin(position) clip_position: vec4<f32>,
    @location(0) world_normal: vec3<f32>,
    @location(1) world_position: vec3<f32>,
    @location(2) tint: vec3<f32>,
}

@vertex
fn vs_main(v: wgpu_anim_Vertex, @builtin(instance_index) instance_index: u32, @builtin(vertex_index) vertex_index: u32) -> VertexOut {
    // Without culling every character is evaluated every frame.
    return vertex_out(v, wgpu_anim_PageInstance(instance_index), vertex_index, 1u);
}

#ifdef WGPU_ANIM_VISIBLE
// A culled draw (SkinBinding::draw_visible): the `instance_index`-th instance the frame evaluated.
@vertex
fn vs_visible(v: wgpu_anim_Vertex, @builtin(instance_index) instance_index: u32, @builtin(vertex_index) vertex_index: u32) -> VertexOut {
    let instance = wgpu_anim_visible_instance(instance_index);
    return vertex_out(v, instance, vertex_index, wgpu_anim_update_rate(instance));
}
#endif

// A skinned vertex of `instance`, evaluated every `rate` frames.
fn vertex_out(v: wgpu_anim_Vertex, instance: wgpu_anim_PageInstance, vertex_index: u32, rate: u32) -> VertexOut {
    // Only the fields drawing needs (not the whole 320-byte instance); no tangent.
#ifdef WGPU_ANIM_MORPH
    let morphed = wgpu_anim_morph(instance, vertex_index, v.position, v.normal, vec3<f32>(0.0));
    let skinned = wgpu_anim_skin(instance, v.joints, v.weights, morphed.position, morphed.normal);
#else
    let skinned = wgpu_anim_skin(instance, v.joints, v.weights, v.position, v.normal);
#endif
    return placed(instance, skinned.position, skinned.normal, rate);
}

// The colour of `instance`: its own tint, or with the LOD tint on the colour of its update rate
// `rate` (1, 2, 4 or 8; 0 for one drawn by its VAT).
fn tint_of(instance: wgpu_anim_PageInstance, rate: u32) -> vec3<f32> {
    if (skin_view.lod_tint.x == 0u) {
        return wgpu_anim_tint(instance).rgb;
    }
    switch rate {
        case 1u: { return vec3<f32>(80.0, 170.0, 240.0) / 255.0; }
        case 2u: { return vec3<f32>(90.0, 200.0, 90.0) / 255.0; }
        case 4u: { return vec3<f32>(235.0, 200.0, 50.0) / 255.0; }
        case 8u: { return vec3<f32>(215.0, 60.0, 45.0) / 255.0; }
        default: { return vec3<f32>(170.0, 110.0, 220.0) / 255.0; }
    }
}

// A model-space vertex of `instance` (at update rate `rate`) placed in the world and on screen.
fn placed(instance: wgpu_anim_PageInstance, position: vec3<f32>, normal: vec3<f32>, rate: u32) -> VertexOut {
    let world = wgpu_anim_world(instance);
    let world_position = wgpu_anim_transform_point(world, position);
    var out: VertexOut;
    out.clip_position = skin_view.camera.view_proj * vec4<f32>(world_position, 1.0);
    out.world_normal = normalize(wgpu_anim_transform_normal(world, normal));
    out.world_position = world_position;
    out.tint = tint_of(instance, rate);
    return out;
}

#ifdef WGPU_ANIM_VAT
// A VAT draw (CulledDraws::for_vat): the `instance_index`-th instance the frame plays by its VAT,
// with no skeleton (the vertex is the index the draw gives).
@vertex
fn vs_vat(@builtin(instance_index) instance_index: u32, @builtin(vertex_index) vertex_index: u32) -> VertexOut {
    let instance = wgpu_anim_vat_instance(instance_index);
    let played = wgpu_anim_vat(instance, vertex_index);
    return placed(instance, played.position, played.normal, 0u);
}

// Instance `job.instance`'s VAT played for its first `job.vertex_count` vertices, as vs_vat plays
// them, into `skinned` (model space). CPU mirror: vat::Vat::vertex.
@compute @workgroup_size(WORKGROUP_SIZE)
fn vat(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let v = job_vertex(wg, groups, lid);
    if (v >= job.vertex_count) {
        return;
    }
    let played = wgpu_anim_vat(wgpu_anim_PageInstance(job.instance), v);
    skinned[v] = SkinnedOut(vec4<f32>(played.position, 1.0), vec4<f32>(played.normal, 0.0));
}
#endif

@fragment
fn fs_main(in: VertexOut) -> @location(0) vec4<f32> {
    let n = normalize(in.world_normal);
    let l = normalize(-skin_view.camera.light_dir.xyz);
    let diffuse = max(dot(n, l), 0.0);
    let sky = 0.5 + 0.5 * n.y;
    let view = normalize(skin_view.camera.eye.xyz - in.world_position);
    let rim = pow(1.0 - max(dot(n, view), 0.0), 3.0) * 0.15;
    let color = in.tint * (0.25 * sky + 0.8 * diffuse) + vec3<f32>(rim);
    return vec4<f32>(color, 1.0);
}
