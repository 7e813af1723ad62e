// Props held in sockets: a rigid mesh drawn once per holder, placed by the holder's socket matrix
// (world space), which the palette pass writes after the page's palettes
// (Animator::socket_slot). One instanced draw per page of the animator; the instance buffer holds
// each holder's socket slot in the page's palette buffer and its index in the page. With culling,
// a holder the frame did not evaluate is not drawn. The palettes, the point and normal
// transforms come from the skinning module (gpu::SkinBinding::BUILT_IN, appended as text: the
// palettes at binding 1, the instances at binding 2); Rust mirrors: math::Affine::transform_point3
// and cpu::affine_transform_normal. Rust: gpu::PropRenderer.

// The camera (Rust: layout::Camera): its WGSL declaration is prepended to this file.
@group(0) @binding(0) var<uniform> camera: Camera;
// The prop's colour (rgb); w: 1 when the animator culls.
@group(0) @binding(3) var<uniform> color: vec4<f32>;
// The page's outputs (Rust: layout::GpuOutput, 8 units each): word z of unit 3 is `evaluate`.
@group(0) @binding(9) var<storage, read> outputs: array<vec4<u32>>;

struct VertexIn {
    // Rust: mesh::SkinVertex (position and normal in the socket's frame; its joints and weights
    // are not used), then the instance's socket slot.
    @location(0) position: vec3<f32>,
    @location(1) normal: vec3<f32>,
    @location(5) slot: u32,
    // The holder's index in its page.
    @location(6) holder: u32,
}

struct VertexOut {
    @builtin(position) clip_position: vec4<f32>,
    @location(0) world_normal: vec3<f32>,
    @location(1) world_position: vec3<f32>,
}

@vertex
fn vs_main(v: VertexIn) -> VertexOut {
    let m = wgpu_anim_palettes[v.slot];
    let world_position = wgpu_anim_transform_point(m, v.position);
    var out: VertexOut;
    if (color.w != 0.0 && outputs[8u * v.holder + 3u].z == 0u) {
        // Culled: the socket matrix is of the holder's last evaluated frame. Behind the near
        // plane, the triangle is clipped.
        out.clip_position = vec4<f32>(0.0, 0.0, -1.0, 1.0);
        return out;
    }
    out.clip_position = camera.view_proj * vec4<f32>(world_position, 1.0);
    out.world_normal = wgpu_anim_transform_normal(m, v.normal);
    out.world_position = world_position;
    return out;
}

@fragment
fn fs_main(in: VertexOut) -> @location(0) vec4<f32> {
    let n = normalize(in.world_normal);
    let l = normalize(-camera.light_dir.xyz);
    let diffuse = max(dot(n, l), 0.0);
    let sky = 0.5 + 0.5 * n.y;
    let view = normalize(camera.eye.xyz - in.world_position);
    let shine = pow(max(dot(reflect(-l, n), view), 0.0), 24.0) * 0.4;
    return vec4<f32>(color.rgb * (0.25 * sky + 0.8 * diffuse) + vec3<f32>(shine), 1.0);
}
