//! Skinning in a shader of the user's own: the `wgpu_anim::skinning` module, bound with
//! `SkinBinding`, skins on the GPU what the CPU mirror skins from the same palette.
//!
//! Tolerance: 1e-5 relative to 1 + |expected| on positions and normals (four matrix rows summed
//! in the same order; FMA contraction may differ).

mod common;

use glam::{Mat4, Quat, Vec3, Vec4};
use wgpu_anim::gpu::{SkinBinding, read_buffer};
use wgpu_anim::mesh::SkinVertex;
use wgpu_anim::{Animator, AnimatorDesc, InstanceDesc, cpu, mannequin};

/// Skins every vertex of `vertices` for every instance with the module, in a compute pass (the
/// module is stage-agnostic; only `SkinBinding::layout_entries` says vertex): per vertex and
/// instance, the model-space position, normal and tangent and the world-space position.
const PROBE: &str = "
@group(0) @binding(2) var<storage, read> vertex_words: array<u32>;
@group(0) @binding(3) var<storage, read_write> skinned: array<vec4<f32>>;
@group(0) @binding(4) var<uniform> counts: vec4<u32>;

fn f(w: u32) -> f32 { return bitcast<f32>(vertex_words[w]); }

@compute @workgroup_size(64)
fn probe(@builtin(global_invocation_id) id: vec3<u32>) {
    let v = id.x;
    let instance = id.y;
    if (v >= counts.x) { return; }
    let w = v * 14u;
    let j01 = vertex_words[w + 8u];
    let j23 = vertex_words[w + 9u];
    let s = wgpu_anim_skin(
        instance,
        vec4<u32>(j01 & 0xffffu, j01 >> 16u, j23 & 0xffffu, j23 >> 16u),
        vec4<f32>(f(w + 10u), f(w + 11u), f(w + 12u), f(w + 13u)),
        vec3<f32>(f(w), f(w + 1u), f(w + 2u)),
        vec3<f32>(f(w + 3u), f(w + 4u), f(w + 5u)),
        vec4<f32>(0.0, 0.0, 1.0, -1.0),
    );
    let world = wgpu_anim_world_matrix(instance) * vec4<f32>(s.position, 1.0);
    let k = (instance * counts.x + v) * 4u;
    skinned[k] = vec4<f32>(s.position, 1.0);
    skinned[k + 1u] = vec4<f32>(s.normal, 0.0);
    skinned[k + 2u] = s.tangent;
    skinned[k + 3u] = world;
}
";

#[test]
fn the_skinning_module_skins_what_the_cpu_mirror_skins() {
    let (device, queue) = common::device();
    let (lib, skeleton, clips) = mannequin::library();
    let mut animator = Animator::new(&device, &lib, &AnimatorDesc::default()).unwrap();
    let worlds = [
        Mat4::IDENTITY,
        Mat4::from_scale_rotation_translation(
            Vec3::new(1.5, 0.5, 1.0),
            Quat::from_rotation_y(0.7),
            Vec3::new(3.0, 0.0, -2.0),
        ),
        Mat4::from_rotation_translation(Quat::from_rotation_x(-0.4), Vec3::new(-1.0, 2.0, 0.5)),
    ];
    for (k, world) in worlds.iter().enumerate() {
        animator
            .add_instance(&InstanceDesc {
                time: 0.3 * k as f32,
                world: *world,
                ..InstanceDesc::new(clips[k % clips.len()])
            })
            .unwrap();
    }
    for dt in [0.0, 0.1] {
        animator.prepare(&queue, dt);
        let mut encoder = device.create_command_encoder(&Default::default());
        animator.encode(&mut encoder);
        queue.submit([encoder.finish()]);
    }

    let mesh = mannequin::mesh(&lib.skeletons()[skeleton.0 as usize]);
    let vertices: Vec<SkinVertex> = mesh.gpu_vertices();
    let binding = SkinBinding { group: 0, palette: 0 };
    let source = format!("{}\n{PROBE}", binding.wgsl());
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("probe"),
        source: wgpu::ShaderSource::Wgsl(source.into()),
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some("probe"),
        layout: None,
        module: &module,
        entry_point: Some("probe"),
        compilation_options: Default::default(),
        cache: None,
    });
    use wgpu::util::DeviceExt;
    let words = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: None,
        contents: bytemuck::cast_slice(&vertices),
        usage: wgpu::BufferUsages::STORAGE,
    });
    let n = vertices.len() as u32;
    let counts = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: None,
        contents: bytemuck::cast_slice(&[n, 0, 0, 0]),
        usage: wgpu::BufferUsages::UNIFORM,
    });
    let out_len = u64::from(n) * worlds.len() as u64 * 4;
    let out = device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: out_len * 16,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    fn entry(binding: u32, buffer: &wgpu::Buffer) -> wgpu::BindGroupEntry<'_> {
        wgpu::BindGroupEntry {
            binding,
            resource: buffer.as_entire_binding(),
        }
    }
    let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &pipeline.get_bind_group_layout(0),
        entries: &[
            entry(binding.palette, animator.page_palette_buffer(0).unwrap()),
            entry(binding.instances(), animator.page_instance_buffer(0).unwrap()),
            entry(2, &words),
            entry(3, &out),
            entry(4, &counts),
        ],
    });
    let mut encoder = device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, &bind_group, &[]);
        pass.dispatch_workgroups(n.div_ceil(64), worlds.len() as u32, 1);
    }
    queue.submit([encoder.finish()]);
    let gpu: Vec<Vec4> = read_buffer(&device, &queue, &out, 0, out_len).unwrap();

    let (_, pose) = animator.read_back(&device, &queue).unwrap();
    let close = |a: Vec4, b: Vec4| (a - b).abs().max_element() <= 1e-5 * (1.0 + b.abs().max_element());
    let (mut moved, mut off_by_one) = (0, 0);
    for (i, inst) in animator.instances().iter().enumerate() {
        for (v, vertex) in vertices.iter().enumerate() {
            let cpu_point = cpu::skin_vertex(&pose.palette, inst.joint_offset, vertex);
            let k = (i * vertices.len() + v) * 4;
            let world = worlds[i] * Vec4::from((cpu_point.position.truncate(), 1.0));
            assert!(
                close(gpu[k], cpu_point.position) && close(gpu[k + 1], cpu_point.normal) && close(gpu[k + 3], world),
                "instance {i}, vertex {v}: GPU {:?} {:?} {:?}, CPU {:?} {:?} {world:?}",
                gpu[k],
                gpu[k + 1],
                gpu[k + 3],
                cpu_point.position,
                cpu_point.normal
            );
            // The tangent is unit length, its w passed through.
            assert!((gpu[k + 2].truncate().length() - 1.0).abs() < 1e-5 && gpu[k + 2].w == -1.0);
            moved += usize::from((cpu_point.position.truncate() - Vec3::from(vertex.position)).length() > 1e-3);
            // The comparison fails against the palette one joint off (first instance).
            if i == 0 {
                let shifted = cpu::skin_vertex(&pose.palette, inst.joint_offset + 1, vertex);
                off_by_one += usize::from(!close(gpu[k], shifted.position));
            }
        }
    }
    assert!(
        moved > vertices.len(),
        "the poses move the mesh ({moved} vertices moved)"
    );
    assert!(
        off_by_one > vertices.len() / 2,
        "{off_by_one} of {} vertices differ from the palette one joint off",
        vertices.len()
    );
}
