//! A renderer of your own: its pipeline and WGSL, skinning with the library's module, under WebGPU's default limits.
//! `cargo run --example own_pipeline` opens a window; `-- out.ppm` writes the frame at 1.5 s to a PPM file instead.
use std::{process::ExitCode, sync::Arc};
use wgpu::{BufferUsages, Device, Queue, TextureView, util::BufferInitDescriptor, util::DeviceExt};
use wgpu_anim::gpu::{Camera, MeshBuffers, OffscreenTarget, SkinBinding, depth_state, depth_view, scene_pass};
use wgpu_anim::{Animator, AnimatorDesc, InstanceDesc, mannequin};
use winit::{application::ApplicationHandler, event::WindowEvent, event_loop::*, window::*};

/// Group 0: camera at 0; palettes, instances, dual quaternions at 1, 2, 4 (rigid: no joint scales); vertices at 0-4.
pub const SKIN: SkinBinding = SkinBinding::BUILT_IN_DUAL.with_rigid(true);
/// Your WGSL, before the skinning module (`wgpu_anim_` names); the built-in renderer's light, to compare.
const SHADER: &str = "struct Camera { view_proj: mat4x4<f32>, eye: vec4<f32>, light_dir: vec4<f32> }
@group(0) @binding(0) var<uniform> camera: Camera;
struct Out { @builtin(position) clip: vec4<f32>, @location(0) normal: vec3<f32>, @location(1) at: vec3<f32>, @location(2) tint: vec3<f32> }
@vertex fn vs(v: wgpu_anim_Vertex, @builtin(instance_index) instance_index: u32) -> Out {
    let i = wgpu_anim_PageInstance(instance_index); // the instance in the page being drawn
    let s = wgpu_anim_skin(i, v.joints, v.weights, v.position, v.normal); // no tangent needed
    let world = wgpu_anim_world(i);
    let at = wgpu_anim_transform_point(world, s.position);
    return Out(camera.view_proj * vec4<f32>(at, 1.0), wgpu_anim_transform_normal(world, s.normal), at, wgpu_anim_tint(i).rgb);
}
@fragment fn fs(in: Out) -> @location(0) vec4<f32> {
    let n = normalize(in.normal);
    let diffuse = max(dot(n, normalize(-camera.light_dir.xyz)), 0.0);
    let rim = pow(1.0 - max(dot(n, normalize(camera.eye.xyz - in.at)), 0.0), 3.0) * 0.15;
    return vec4<f32>(in.tint * (0.25 * (0.5 + 0.5 * n.y) + 0.8 * diffuse) + vec3<f32>(rim), 1.0);
}";
/// 25 mannequins (the right two columns skinned with dual quaternions) and what draws them: pipeline, camera, mesh.
pub struct Scene {
    pub animator: Animator,
    pub mesh: MeshBuffers,
    pub pipeline: wgpu::RenderPipeline,
    pub camera: wgpu::Buffer,
    pub groups: Vec<wgpu::BindGroup>,
}
impl Scene {
    pub fn new(device: &Device, format: wgpu::TextureFormat, aspect: f32) -> wgpu_anim::Result<Self> {
        let (lib, skeleton, clips) = mannequin::library();
        let mut animator = Animator::new(device, &lib, &AnimatorDesc::default().with_dual_quaternion(true))?;
        for i in 0..25 {
            let world = glam::Mat4::from_translation([(i % 5) as f32 * 1.5 - 3.0, 0.0, (i / 5) as f32 * -1.5].into());
            let (time, tint) = (i as f32 * 0.3, [90 + 30 * (i % 5) as u8, 120, 220 - 30 * (i / 5) as u8, 255]);
            let skinning = if i % 5 >= 3 { wgpu_anim::gpu::Skinning::DualQuaternion } else { Default::default() };
            let desc = InstanceDesc::new(clips[i % 3]).with_time(time).with_world(world).with_tint(tint);
            animator.controller_mut().add_instance(&desc.with_skinning(skinning))?;
        }
        let mesh = MeshBuffers::new(device, &lib, skeleton, &mannequin::mesh(&mannequin::skeleton()))?;
        let source = wgpu::ShaderSource::Wgsl(format!("{SHADER}\n{}", SKIN.wgsl()).into());
        let pipeline = pollster::block_on(wgpu_anim::gpu::scoped(device, "the shader and pipeline", || {
            let module = device.create_shader_module(wgpu::ShaderModuleDescriptor { label: None, source });
            device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
                label: Some("own pipeline"),
                layout: None, // from the shader; or add SKIN.layout_entries() to a layout of yours
                vertex: wgpu::VertexState {
                    module: &module,
                    entry_point: Some("vs"),
                    compilation_options: Default::default(),
                    buffers: &[Some(wgpu_anim::SkinVertex::LAYOUT)],
                },
                fragment: Some(wgpu::FragmentState {
                    module: &module,
                    entry_point: Some("fs"),
                    compilation_options: Default::default(),
                    targets: &[Some(format.into())],
                }),
                primitive: wgpu::PrimitiveState { cull_mode: Some(wgpu::Face::Back), ..Default::default() },
                depth_stencil: Some(depth_state(OffscreenTarget::DEPTH_FORMAT)),
                multisample: Default::default(),
                multiview_mask: None,
                cache: None,
            })
        }))?; // in an error scope: a mistake in your WGSL or pipeline is an Err (wgpu's message), not a panic
        let (c, usage, label) = (camera(aspect), BufferUsages::UNIFORM | BufferUsages::COPY_DST, None);
        let cam = device.create_buffer_init(&BufferInitDescriptor { label, contents: bytemuck::bytes_of(&c), usage });
        let camera_entry = wgpu::BindGroupEntry { binding: 0, resource: cam.as_entire_binding() };
        let groups = SKIN.bind_groups(device, &pipeline.get_bind_group_layout(0), &animator, &[camera_entry])?;
        Ok(Self { animator, mesh, pipeline, camera: cam, groups })
    }

    pub fn frame(&mut self, device: &Device, queue: &Queue, to: [&TextureView; 2], dt: f32) -> wgpu_anim::Result<()> {
        self.animator.prepare(queue, dt);
        let mut encoder = device.create_command_encoder(&Default::default());
        self.animator.encode(&mut encoder)?; // clock, sample, hierarchy and palettes, into your encoder
        let mut pass = scene_pass(&mut encoder, to[0], to[1], wgpu::Color { r: 0.55, g: 0.62, b: 0.7, a: 1.0 });
        pass.set_pipeline(&self.pipeline);
        let n = self.animator.controller().instance_count() as u32;
        SKIN.draw(&mut pass, &self.groups, &self.animator, &self.mesh, 0..n)?;
        drop(pass);
        queue.submit([encoder.finish()]);
        Ok(())
    }
}

pub fn camera(aspect: f32) -> Camera {
    Camera::look_at(glam::vec3(0.0, 3.0, 6.5), glam::vec3(0.0, 0.8, -3.0), 0.8, aspect, 0.1, 100.0)
}

fn headless(path: String) -> Result<(), Box<dyn std::error::Error>> {
    let (device, queue) = wgpu_anim::gpu::headless_device_with_limits(wgpu::Limits::default())?;
    let target = OffscreenTarget::new(&device, 960, 540)?;
    let v = [&target.color, &target.depth].map(|t| t.create_view(&Default::default()));
    Scene::new(&device, OffscreenTarget::COLOR_FORMAT, 16.0 / 9.0)?.frame(&device, &queue, [&v[0], &v[1]], 1.5)?;
    let rgb: Vec<u8> = target.read_rgba(&device, &queue)?.chunks(4).flat_map(|p| [p[0], p[1], p[2]]).collect();
    Ok(std::fs::write(path, [b"P6 960 540 255\n".as_slice(), &rgb].concat())?) // a binary PPM, with std only
}

struct App(Option<(Arc<Window>, wgpu::Surface<'static>, TextureView, Device, Queue, Scene)>);
impl ApplicationHandler for App {
    fn resumed(&mut self, event_loop: &ActiveEventLoop) {
        let window = Arc::new(event_loop.create_window(Window::default_attributes().with_resizable(false)).unwrap());
        let display = Box::new(event_loop.owned_display_handle());
        let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_with_display_handle_from_env(display));
        let surface = instance.create_surface(window.clone()).unwrap();
        let options = wgpu::RequestAdapterOptions { compatible_surface: Some(&surface), ..Default::default() };
        let adapter = pollster::block_on(instance.request_adapter(&options)).unwrap();
        let (device, queue) = pollster::block_on(adapter.request_device(&Default::default())).unwrap();
        let size = window.inner_size();
        let config = surface.get_default_config(&adapter, size.width, size.height).unwrap();
        surface.configure(&device, &config);
        let scene = Scene::new(&device, config.format, size.width as f32 / size.height as f32);
        let Ok(scene) = scene.inspect_err(|e| eprintln!("own_pipeline: {e}")) else { std::process::exit(1) };
        self.0 = Some((window, surface, depth_view(&device, size.width, size.height), device, queue, scene));
    }

    fn window_event(&mut self, event_loop: &ActiveEventLoop, _: WindowId, event: WindowEvent) {
        let Some((window, surface, depth, device, queue, scene)) = &mut self.0 else { return };
        match event {
            WindowEvent::CloseRequested => event_loop.exit(),
            WindowEvent::RedrawRequested => {
                use wgpu::CurrentSurfaceTexture::{Lost, Outdated, Suboptimal, Success};
                match surface.get_current_texture() {
                    Success(frame) | Suboptimal(frame) => {
                        let view = frame.texture.create_view(&Default::default());
                        scene.frame(device, queue, [&view, depth], 1.0 / 60.0).unwrap(); // presented at 60 Hz or so
                        queue.present(frame);
                    }
                    Lost | Outdated => surface.configure(device, &surface.get_configuration().unwrap()),
                    _ => {} // a timeout or an occluded window: the next redraw tries again
                }
                window.request_redraw();
            }
            _ => {}
        }
    }
}

fn main() -> ExitCode {
    let run = std::env::args().nth(1).map_or_else(|| Ok(EventLoop::new()?.run_app(&mut App(None))?), headless);
    run.inspect_err(|e| eprintln!("own_pipeline: {e}")).map_or(ExitCode::FAILURE, |()| ExitCode::SUCCESS)
}
