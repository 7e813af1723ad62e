// Every resource of the animation passes, with one binding number each. A stage's bind group holds
// only what that stage uses (see src/gpu/animator.rs, STAGE_BINDINGS). Uniforms first, then
// read-only inputs, then read-write outputs.

@group(0) @binding(0) var<uniform> frame: Frame;
@group(0) @binding(1) var<storage, read> clips: array<ClipInfo>;
@group(0) @binding(2) var<storage, read> tracks: array<Track>;
@group(0) @binding(3) var<storage, read> times: array<f32>;
@group(0) @binding(4) var<storage, read> values: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read> skeletons: array<SkeletonInfo>;
@group(0) @binding(6) var<storage, read> parents: array<i32>;
@group(0) @binding(7) var<storage, read> inverse_binds: array<Affine>;
@group(0) @binding(8) var<storage, read> instances: array<Instance>;
@group(0) @binding(9) var<storage, read_write> clocks: array<Clock>;
@group(0) @binding(10) var<storage, read_write> local_poses: array<LocalPose>;
@group(0) @binding(11) var<storage, read_write> model_poses: array<Affine>;
@group(0) @binding(12) var<storage, read_write> palettes: array<Affine>;
@group(0) @binding(13) var<storage, read_write> blend_lists: array<BlendList>;
@group(0) @binding(14) var<storage, read> blend_nodes: array<BlendNode>;
@group(0) @binding(15) var<storage, read> blend_children: array<BlendChild>;
@group(0) @binding(16) var<storage, read> blend_triangles: array<vec4<u32>>;
@group(0) @binding(17) var<storage, read> layer_defs: array<LayerDef>;
