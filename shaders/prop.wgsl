// Props held in sockets: a rigid mesh drawn once per holder, placed by the holder's socket matrix
// (world space), which the palette pass writes after the page's palettes
// (Animator::socket_slot). One instanced draw per page of the animator; the instance buffer holds
// each holder's socket slot in the page's palette buffer. Rust: gpu::PropRenderer.

struct Camera {
    view_proj: mat4x4<f32>,
    eye: vec4<f32>,
    light_dir: vec4<f32>,
}

// Rows of a 3x4 affine matrix. Rust: math::Affine.
struct Affine {
    x: vec4<f32>,
    y: vec4<f32>,
    z: vec4<f32>,
}

@group(0) @binding(0) var<uniform> camera: Camera;
@group(0) @binding(1) var<storage, read> palettes: array<Affine>;
@group(0) @binding(2) var<uniform> color: vec4<f32>;

struct VertexIn {
    // Rust: mesh::SkinVertex (position and normal in the socket's frame; its joints and weights
    // are not used), then the instance's socket slot.
    @location(0) position: vec3<f32>,
    @location(1) normal: vec3<f32>,
    @location(5) slot: u32,
}

struct VertexOut {
    @builtin(position) clip_position: vec4<f32>,
    @location(0) world_normal: vec3<f32>,
    @location(1) world_position: vec3<f32>,
}

@vertex
fn vs_main(v: VertexIn) -> VertexOut {
    let m = palettes[v.slot];
    let p = vec4<f32>(v.position, 1.0);
    let world_position = vec3<f32>(dot(m.x, p), dot(m.y, p), dot(m.z, p));
    // The normal through the cofactor of the 3x3 part (inverse transpose up to a positive factor).
    let c0 = vec3<f32>(m.x.x, m.y.x, m.z.x);
    let c1 = vec3<f32>(m.x.y, m.y.y, m.z.y);
    let c2 = vec3<f32>(m.x.z, m.y.z, m.z.z);
    var n = cross(c1, c2) * v.normal.x + cross(c2, c0) * v.normal.y + cross(c0, c1) * v.normal.z;
    if (dot(c0, cross(c1, c2)) < 0.0) {
        n = -n;
    }
    var out: VertexOut;
    out.clip_position = camera.view_proj * vec4<f32>(world_position, 1.0);
    out.world_normal = n;
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
