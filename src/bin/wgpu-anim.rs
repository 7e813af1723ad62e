//! `wgpu-anim`: inspect, sample and render glTF animation files, and time animation frames.

use clap::error::ErrorKind;
use clap::{Args, CommandFactory, Parser, Subcommand};
use glam::{DMat4, DVec3, Mat4, Vec2, Vec3};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use wgpu_anim::bench::{self, Config, PathKind, Workload};
use wgpu_anim::gpu::{Camera, GroundRenderer, OffscreenTarget};
use wgpu_anim::offline::compress::ClipFormat;
use wgpu_anim::offline::gltf_import::{self, ChannelPath, ClipSource, GltfPose, Imported};
use wgpu_anim::scene::Character;
use wgpu_anim::{Animator, AnimatorDesc, InstanceDesc, Interpolation, LoopMode, SkinnedRenderer, reference};

/// `print!` that ends the program quietly when stdout is a closed pipe (`wgpu-anim inspect f |
/// head`), as a command-line tool does, instead of panicking; another write error is returned.
macro_rules! out {
    ($($arg:tt)*) => {
        write_stdout(format_args!($($arg)*))?
    };
}

/// `println!` with [`out!`]'s handling of a closed pipe.
macro_rules! outln {
    () => {
        out!("\n")
    };
    ($($arg:tt)*) => {
        out!("{}\n", format_args!($($arg)*))
    };
}

/// Writes to stdout; exits with success when the reader has gone (a broken pipe).
fn write_stdout(args: std::fmt::Arguments) -> Result<(), String> {
    use std::io::Write;
    match std::io::stdout().lock().write_fmt(args) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => std::process::exit(0),
        Err(e) => Err(format!("cannot write to stdout: {e}")),
    }
}

/// wgpu-anim — GPU skeletal animation for crowds of skinned characters.
#[derive(Parser)]
#[command(
    name = "wgpu-anim",
    version,
    arg_required_else_help = false,
    after_help = "FILE is a .gltf (with its .bin files) or .glb file. Errors print one line and exit with status 1."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Skeleton tree, clips (duration, channels, interpolation, keys), meshes (vertices,
    /// triangles, influences), morph targets and import notes.
    Inspect {
        /// The glTF file (.gltf with its .bin files, or .glb).
        #[arg(value_name = "FILE")]
        file: PathBuf,
    },
    /// Evaluates a clip at a time: the joints' world matrices, the skinning matrices and the
    /// skinned vertices of mesh 0, primitive 0.
    ///
    /// The clip is an animation of the file, by index or name; the time is clamped to its first
    /// and last key, no looping. Without --cpu or --reference the GPU evaluates the pose (any wgpu
    /// adapter; a software Vulkan driver such as lavapipe works).
    Sample(SampleArgs),
    /// Draws a clip at a time to a PNG, without a window.
    ///
    /// The model's meshes are skinned on the GPU, standing on a ground plane, seen from slightly
    /// above and in front (+Z), the camera framed on the posed model.
    Render(RenderArgs),
    /// Times one animation frame of crowds of built-in mannequins, GPU and CPU.
    ///
    /// For each workload (single-clip: one clip each; locomotion-2d: the 2D locomotion blend space,
    /// a quarter of the crowd mid-cross-fade; layered: that plus a masked override, a local and a
    /// mesh-space additive layer) and character count, on each path: gpu-fused (the GPU, one
    /// dispatch, the pose in workgroup memory; where the device allows it), gpu-staged (the GPU,
    /// four dispatches; per-pass times from timestamp queries when the adapter has them), cpu-1
    /// (the CPU mirror on one thread) and cpu-all (the CPU mirror on every core). Medians over
    /// --frames frames after 3 warm-up frames; progress on stderr, a Markdown table on stdout. A
    /// count the device cannot hold is skipped with a note. Bytes per joint are counted from the
    /// buffer layouts: per-character data, and shared library data (cached on a GPU). With both
    /// clip formats and gpu-staged, a second table times the sample pass of raw and compressed
    /// clips in alternate frames (a slow spell of a shared machine falls on both).
    Bench(BenchArgs),
    /// Compresses a file's clips and reports size and accuracy per clip.
    ///
    /// Constant and rest-pose tracks are stripped; the others are sampled uniformly, range-reduced
    /// per clip and per segment of 16 frames, and quantized with per-segment bit widths chosen so
    /// that no virtual point on a shell around any joint moves more than the threshold, in object
    /// space (ACL's error metric). Tracks the format cannot hold stay raw and are listed. Errors
    /// are measured in f64 at every frame and half-way between frames. A table on stdout (or JSON
    /// with --json), progress on stderr; --out writes the compressed clips for
    /// `sample --compressed` and `render --compressed`.
    Compress(CompressArgs),
}

/// `wgpu-anim compress`'s arguments.
#[derive(Args)]
struct CompressArgs {
    /// The glTF file (.gltf with its .bin files, or .glb).
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// Only this clip: an animation index in the file, or its name [default: every clip].
    #[arg(long, value_name = "N")]
    clip: Option<String>,
    /// Largest error, centimetres.
    #[arg(long, value_name = "CM", default_value_t = 0.01, value_parser = positive_f64)]
    threshold: f64,
    /// Radius of the shell of virtual points around each joint, centimetres.
    #[arg(long, value_name = "CM", default_value_t = 3.0, value_parser = positive_f64)]
    shell: f64,
    /// Largest error of an element of a joint's object-space rotation matrix, or of its product
    /// with a rotation such as a skin's inverse bind matrix (0: none, the shell metric alone, as
    /// ACL).
    #[arg(long, value_name = "R", default_value_t = 9e-5, value_parser = non_negative_f64)]
    rotation_tolerance: f64,
    /// Largest error of a skin matrix's translation, as a fraction of the skeleton's size (0:
    /// none).
    #[arg(long, value_name = "F", default_value_t = 1e-4, value_parser = non_negative_f64)]
    skin_tolerance: f64,
    /// Centimetres per file unit: 100 for glTF's metres, 5.6444 for the CMU takes.
    #[arg(long, value_name = "CM", default_value_t = 100.0, value_parser = positive_f64)]
    unit_cm: f64,
    /// Frames per segment, a power of two (ACL's default is about 16).
    #[arg(long, value_name = "N", default_value_t = 16, value_parser = parse_count)]
    segment_frames: u32,
    /// Resample every clip to this many frames per second first (the raw clip the errors are
    /// measured against is then the resampled one) [default: the clip's own key rate].
    #[arg(long, value_name = "HZ", value_parser = positive_f64)]
    rate: Option<f64>,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
    /// Write the compressed clips to this file (read by `--compressed FILE`).
    #[arg(long, value_name = "FILE.wgac")]
    out: Option<PathBuf>,
}

/// `wgpu-anim sample`'s arguments.
#[derive(Args)]
struct SampleArgs {
    /// The glTF file (.gltf with its .bin files, or .glb).
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// The clip: an animation index in the file, or its name.
    #[arg(long, value_name = "N")]
    clip: String,
    /// Time in seconds, clamped to the clip's first and last key (no looping).
    #[arg(long, value_name = "T", value_parser = finite_f64, allow_negative_numbers = true)]
    time: f64,
    /// Evaluate with the CPU mirror of the GPU stages (f32).
    #[arg(long, conflicts_with = "reference")]
    cpu: bool,
    /// Evaluate with the f64 reference implementation.
    #[arg(long)]
    reference: bool,
    /// Evaluate through compressed clips: those of FILE.wgac (written by `compress --out`), or,
    /// without a file, the file's clips compressed with the default settings.
    #[arg(long, value_name = "FILE.wgac", num_args = 0..=1, default_missing_value = "")]
    compressed: Option<String>,
    /// Print JSON with the fields and conventions of the conformance fixtures (matrices are 16
    /// floats, column-major; joints in skin order when skinned, else every node in node order).
    #[arg(long)]
    json: bool,
}

/// Most instances `render --count` draws.
const MAX_RENDER_COUNT: u32 = 10_000;
/// Largest side of a `render --size` picture, pixels.
const MAX_RENDER_SIDE: u32 = 16_384;

/// `wgpu-anim render`'s arguments.
#[derive(Args)]
struct RenderArgs {
    /// The glTF file (.gltf with its .bin files, or .glb).
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// The clip: an animation index in the file, or its name.
    #[arg(long, value_name = "N", default_value = "0")]
    clip: String,
    /// Time in seconds.
    #[arg(long, value_name = "T", default_value_t = 0.0, value_parser = finite_f32, allow_negative_numbers = true)]
    time: f32,
    /// Draw K instances on a grid, their times spread over the clip so that they differ.
    #[arg(long, value_name = "K", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_RENDER_COUNT)))]
    count: u32,
    /// Image size in pixels.
    #[arg(long, value_name = "WxH", default_value = "800x600", value_parser = parse_size)]
    size: Size,
    /// Where to write the picture.
    #[arg(long, value_name = "IMAGE.png")]
    out: PathBuf,
    /// Leave out the ground plane.
    #[arg(long)]
    no_ground: bool,
    /// Draw through compressed clips: those of FILE.wgac (written by `compress --out`), or,
    /// without a file, the file's clips compressed with the default settings.
    #[arg(long, value_name = "FILE.wgac", num_args = 0..=1, default_missing_value = "")]
    compressed: Option<String>,
}

/// `wgpu-anim bench`'s arguments.
#[derive(Args)]
struct BenchArgs {
    /// Crowd sizes, comma-separated.
    #[arg(long, value_name = "N,...", value_delimiter = ',', value_parser = parse_count, default_value = "1000,4000,16000,64000")]
    characters: Vec<u32>,
    /// Measured frames per configuration (medians are reported).
    #[arg(long, value_name = "N", default_value_t = Config::default().frames, value_parser = positive::<u32>)]
    frames: u32,
    /// Workloads, comma-separated.
    #[arg(long, value_name = "NAME,...", value_delimiter = ',', value_parser = parse_workload, default_value = "single-clip,single-clip-random,locomotion-2d,layered")]
    workloads: Vec<Workload>,
    /// Paths, comma-separated.
    #[arg(long, value_name = "NAME,...", value_delimiter = ',', value_parser = parse_path, default_value = "gpu-fused,gpu-staged,cpu-1,cpu-all")]
    paths: Vec<PathKind>,
    /// How the mannequin's library stores its clips, comma-separated: a set of rows for each.
    #[arg(long, value_name = "raw,compressed", value_delimiter = ',', value_parser = parse_clip_format, default_value = "raw,compressed")]
    clip_format: Vec<ClipFormat>,
    /// Threads of cpu-all [default: every core].
    #[arg(long, value_name = "N", value_parser = positive::<usize>)]
    threads: Option<usize>,
    /// Write the rows as a JSON array to PATH.
    #[arg(long, value_name = "PATH")]
    json: Option<PathBuf>,
    /// Write a log-log PNG chart of frame time against characters to PATH.
    #[arg(long, value_name = "PATH.png")]
    plot: Option<PathBuf>,
}

/// A picture's size in pixels.
#[derive(Clone, Copy, Debug)]
struct Size {
    width: u32,
    height: u32,
}

fn non_negative_f64(v: &str) -> Result<f64, String> {
    v.trim()
        .parse::<f64>()
        .ok()
        .filter(|x| x.is_finite() && *x >= 0.0)
        .ok_or_else(|| format!("'{v}' is not a finite number at least 0"))
}

fn positive_f64(v: &str) -> Result<f64, String> {
    v.trim()
        .parse::<f64>()
        .ok()
        .filter(|x| x.is_finite() && *x > 0.0)
        .ok_or_else(|| format!("'{v}' is not a finite positive number"))
}

fn finite_f64(v: &str) -> Result<f64, String> {
    let t: f64 = v.trim().parse().map_err(|_| format!("'{v}' is not a number"))?;
    if t.is_finite() {
        Ok(t)
    } else {
        Err(format!("'{v}' is not finite"))
    }
}

fn finite_f32(v: &str) -> Result<f32, String> {
    let t: f32 = v.trim().parse().map_err(|_| format!("'{v}' is not a number"))?;
    if t.is_finite() {
        Ok(t)
    } else {
        Err(format!("'{v}' is not finite"))
    }
}

fn parse_size(v: &str) -> Result<Size, String> {
    v.split_once(['x', 'X'])
        .and_then(|(w, h)| Some((w.trim().parse::<u32>().ok()?, h.trim().parse::<u32>().ok()?)))
        .filter(|&(w, h)| (1..=MAX_RENDER_SIDE).contains(&w) && (1..=MAX_RENDER_SIDE).contains(&h))
        .map(|(width, height)| Size { width, height })
        .ok_or_else(|| format!("'{v}' is not WxH with sides from 1 to {MAX_RENDER_SIDE} pixels"))
}

fn parse_count(v: &str) -> Result<u32, String> {
    v.trim()
        .replace('_', "")
        .parse::<u32>()
        .ok()
        .filter(|&n| n > 0)
        .ok_or_else(|| format!("'{v}' is not a positive whole number"))
}

fn parse_workload(v: &str) -> Result<Workload, String> {
    Workload::from_name(v.trim()).ok_or_else(|| {
        let names: Vec<_> = Workload::ALL.iter().map(|w| w.name()).collect();
        format!("'{v}' is not a workload ({})", names.join(", "))
    })
}

fn parse_clip_format(v: &str) -> Result<ClipFormat, String> {
    ClipFormat::from_name(v.trim()).ok_or_else(|| format!("'{v}' is not a clip format (raw, compressed)"))
}

fn parse_path(v: &str) -> Result<PathKind, String> {
    PathKind::ALL.into_iter().find(|p| p.name() == v.trim()).ok_or_else(|| {
        let names: Vec<_> = PathKind::ALL.iter().map(|p| p.name()).collect();
        format!("'{v}' is not a path ({})", names.join(", "))
    })
}

/// A whole number above zero.
fn positive<T: std::str::FromStr + PartialOrd + Default>(v: &str) -> Result<T, String> {
    v.trim()
        .parse::<T>()
        .ok()
        .filter(|n| *n > T::default())
        .ok_or_else(|| format!("'{v}' is not a positive whole number"))
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => {
            return match e.print() {
                Ok(()) => ExitCode::SUCCESS,
                Err(_) => ExitCode::from(1),
            };
        }
        Err(e) => {
            eprintln!("error: {}", one_line(&e));
            return ExitCode::from(1);
        }
    };
    let result = match cli.command {
        Command::Inspect { file } => inspect(&file),
        Command::Sample(a) => sample(&a),
        Command::Render(a) => render(&a),
        Command::Bench(a) => run_bench(&a),
        Command::Compress(a) => compress(&a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let line = e.split_whitespace().collect::<Vec<_>>().join(" ");
            eprintln!("error: {line}");
            ExitCode::from(1)
        }
    }
}

/// A command-line error on one line: clap's message and tip, then the usage it printed.
fn one_line(e: &clap::Error) -> String {
    let text = e.render().to_string();
    let flat = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut message = Vec::new();
    let mut usage = None;
    for paragraph in text.split("\n\n").map(str::trim).filter(|p| !p.is_empty()) {
        if let Some(u) = paragraph.strip_prefix("Usage:") {
            usage = Some(flat(u));
        } else if !paragraph.starts_with("For more information") {
            message.push(flat(paragraph.strip_prefix("error:").unwrap_or(paragraph)));
        }
    }
    let mut line = message.join("; ");
    if let Some(u) = usage {
        line.push_str(&format!("; usage: {u}"));
    }
    // Point at the subcommand's help when one was named (the tool itself takes no option
    // before it but -h and -V).
    let command = Cli::command();
    let first = std::env::args_os()
        .skip(1)
        .find(|a| !a.to_string_lossy().starts_with('-'));
    let sub = first.and_then(|a| {
        command
            .get_subcommands()
            .map(clap::Command::get_name)
            .find(|name| a.to_str() == Some(*name))
    });
    match sub {
        Some(sub) => line.push_str(&format!("; run `wgpu-anim {sub} --help` for help")),
        None => line.push_str("; run `wgpu-anim --help` for help"),
    }
    line
}

fn load(file: &Path) -> Result<Imported, String> {
    gltf_import::load(file).map_err(|e| e.to_string())
}

fn interp_name(i: Interpolation) -> &'static str {
    match i {
        Interpolation::Step => "STEP",
        Interpolation::Linear => "LINEAR",
        Interpolation::CubicSpline => "CUBICSPLINE",
    }
}

fn inspect(file: &Path) -> Result<(), String> {
    let imp = load(file)?;
    outln!("file: {}", file.display());
    for (si, s) in imp.skeletons.iter().enumerate() {
        let sk = &s.skeleton;
        match s.skin {
            Some(skin) => outln!(
                "skeleton {si} '{}': skin {skin}, {} joints ({} skin joints, {} ancestors)",
                sk.name(),
                sk.joint_count(),
                s.skin_joints.len(),
                sk.joint_count() - s.skin_joints.len()
            ),
            None => outln!(
                "skeleton {si} '{}': rigid node hierarchy, {} joints",
                sk.name(),
                sk.joint_count()
            ),
        }
        let depths = sk.depths();
        for (j, depth) in depths.iter().enumerate() {
            let skin_index = s.skin_joints.iter().position(|&x| x == j);
            outln!(
                "  {}{} (node {}{})",
                "  ".repeat(*depth as usize),
                sk.joint_names()[j],
                s.joint_nodes[j],
                skin_index.map_or(String::new(), |k| format!(", skin joint {k}"))
            );
        }
        if s.clips.is_empty() {
            outln!("  no clips");
        }
        for c in &s.clips {
            let info = &imp.animations[c.animation];
            let imported: Vec<_> = info.channels.iter().filter(|ch| ch.imported).collect();
            outln!(
                "  clip '{}' (animation {}): {:.4} s, {} joint tracks, {} channels",
                c.clip.name,
                c.animation,
                c.clip.duration,
                c.clip.tracks.len(),
                imported.len()
            );
        }
    }
    outln!("animations: {}", imp.animations.len());
    for (ai, a) in imp.animations.iter().enumerate() {
        outln!(
            "  {ai} '{}': keys {:.4}..{:.4} s, {} channels",
            a.name,
            a.first_key,
            a.duration,
            a.channels.len()
        );
        // Group channels by (path, interpolation): count and key range.
        let mut groups: Vec<(ChannelPath, Interpolation, usize, usize, usize, usize)> = Vec::new();
        for ch in &a.channels {
            match groups.iter_mut().find(|g| g.0 == ch.path && g.1 == ch.interpolation) {
                Some(g) => {
                    g.2 += 1;
                    g.3 = g.3.min(ch.keys);
                    g.4 = g.4.max(ch.keys);
                    g.5 += usize::from(!ch.imported);
                }
                None => groups.push((
                    ch.path,
                    ch.interpolation,
                    1,
                    ch.keys,
                    ch.keys,
                    usize::from(!ch.imported),
                )),
            }
        }
        for (path, interp, n, lo, hi, skipped) in groups {
            let keys = if lo == hi {
                format!("{lo} keys")
            } else {
                format!("{lo}..{hi} keys")
            };
            let skipped = if skipped > 0 {
                format!(", {skipped} not applied")
            } else {
                String::new()
            };
            outln!("    {n} × {path} {}, {keys}{skipped}", interp_name(interp));
        }
    }
    outln!("meshes: {}", imp.meshes.len());
    for m in &imp.meshes {
        outln!(
            "  mesh {} primitive {} '{}' on node {} → skeleton {}: {} vertices, {} triangles, up to {} influences per vertex{}",
            m.mesh_index,
            m.primitive,
            m.mesh.name,
            m.node,
            m.skeleton,
            m.mesh.positions.len(),
            m.mesh.indices.len() / 3,
            m.max_influences,
            if m.morph_targets.is_empty() {
                String::new()
            } else {
                format!(", {} morph targets", m.morph_targets.len())
            }
        );
    }
    let morphs: usize = imp.meshes.iter().map(|m| m.morph_targets.len()).sum();
    outln!("morph targets: {morphs} (read, not applied)");
    outln!("notes: {}", imp.notes.len());
    for n in &imp.notes {
        outln!("  - {n}");
    }
    Ok(())
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum EvalPath {
    Gpu,
    Cpu,
    Reference,
}

impl EvalPath {
    fn name(self) -> &'static str {
        match self {
            EvalPath::Gpu => "gpu",
            EvalPath::Cpu => "cpu",
            EvalPath::Reference => "reference",
        }
    }
}

fn sample(a: &SampleArgs) -> Result<(), String> {
    let path = if a.cpu {
        EvalPath::Cpu
    } else if a.reference {
        EvalPath::Reference
    } else {
        EvalPath::Gpu
    };
    let imp = load(&a.file)?;
    let file = a.file.display().to_string();
    let animation = find_animation(&imp, &file, &a.clip)?;
    let info = &imp.animations[animation];
    let s = imp
        .primary_skeleton()
        .ok_or_else(|| format!("{file}: nothing to animate (no nodes)"))?;
    let sk = &imp.skeletons[s];
    let c = sk
        .clip_of_animation(animation)
        .ok_or_else(|| format!("{file}: animation {animation} does not animate the first skeleton"))?;
    let t = a.time.clamp(f64::from(info.first_key), f64::from(info.duration));
    let ev = match path {
        EvalPath::Reference => {
            let local = reference::sample(&sk.skeleton, &sk.clips[c].clip, t);
            let model = reference::local_to_model(&sk.skeleton, &local);
            let palette = reference::palette(&sk.skeleton, &model);
            Evaluated {
                model,
                palette,
                vertices: None,
            }
        }
        EvalPath::Cpu => cpu_pose(&imp, s, c, t, &clip_source(a.compressed.as_deref())?)?,
        EvalPath::Gpu => gpu_pose(&imp, s, c, t, &clip_source(a.compressed.as_deref())?)?,
    };
    let mut pose = imp.gltf_pose(s, &ev.model, &ev.palette).map_err(|e| e.to_string())?;
    if let Some(v) = ev.vertices {
        pose.vertices = v;
    }
    if a.json {
        print_json(&file, animation, &info.name, a.time, t, path, &pose)
    } else {
        print_summary(&file, animation, &info.name, t, path, &pose)
    }
}

/// Where `--compressed` takes clips from: none given, raw; an empty path, the file's clips
/// compressed with the defaults; else a compressed library file.
fn clip_source(compressed: Option<&str>) -> Result<ClipSource, String> {
    Ok(match compressed {
        None => ClipSource::Raw,
        Some("") => ClipSource::Compress(wgpu_anim::offline::compress::CompressionSettings::default()),
        Some(p) => {
            ClipSource::File(wgpu_anim::offline::compressed_file::read(Path::new(p)).map_err(|e| e.to_string())?)
        }
    })
}

/// The animation `clip` names: an index in the file's animations, or a name.
fn find_animation(imp: &Imported, file: &str, clip: &str) -> Result<usize, String> {
    let animation = match clip.parse::<usize>() {
        Ok(n) => n,
        Err(_) => imp
            .animations
            .iter()
            .position(|x| x.name == clip)
            .ok_or_else(|| format!("{file}: no animation called '{clip}'"))?,
    };
    if animation >= imp.animations.len() {
        return Err(format!(
            "{file}: clip {animation} does not exist (the file has {} animations)",
            imp.animations.len()
        ));
    }
    Ok(animation)
}

/// A pose evaluated by the crate: model matrices and palette in skeleton joint order, and the
/// skinned vertices of mesh 0, primitive 0 when it belongs to the skeleton.
struct Evaluated {
    model: Vec<DMat4>,
    palette: Vec<DMat4>,
    vertices: Option<Vec<DVec3>>,
}

fn mesh0(imp: &Imported, s: usize) -> Option<Vec<wgpu_anim::SkinVertex>> {
    imp.mesh(0, 0)
        .filter(|m| m.skeleton == s && imp.skeletons[s].skin.is_some())
        .map(|m| m.mesh.gpu_vertices())
}

fn to_dmat(a: &[wgpu_anim::Affine]) -> Vec<DMat4> {
    a.iter().map(|a| a.to_mat4().as_dmat4()).collect()
}

fn to_points(p: &[wgpu_anim::cpu::SkinnedPoint]) -> Vec<DVec3> {
    p.iter().map(|p| p.position.truncate().as_dvec3()).collect()
}

/// The CPU mirror of the GPU stages (f32), skinning included.
fn cpu_pose(imp: &Imported, s: usize, c: usize, t: f64, source: &ClipSource) -> Result<Evaluated, String> {
    let lib = imp.build_library_with(source).map_err(|e| e.to_string())?;
    let pose = wgpu_anim::cpu::pose_at(&lib.library, lib.clips[s][c], t as f32).map_err(|e| e.to_string())?;
    let vertices = match mesh0(imp, s) {
        Some(v) => Some(to_points(
            &wgpu_anim::cpu::skin(&pose.palette, 0, &v).map_err(|e| e.to_string())?,
        )),
        None => None,
    };
    Ok(Evaluated {
        model: to_dmat(&pose.model),
        palette: to_dmat(&pose.palette),
        vertices,
    })
}

/// The GPU: one animator instance, every stage read back, vertices through the `skin` shader.
fn gpu_pose(imp: &Imported, s: usize, c: usize, t: f64, source: &ClipSource) -> Result<Evaluated, String> {
    let lib = imp.build_library_with(source).map_err(|e| e.to_string())?;
    let (device, queue) = wgpu_anim::gpu::headless_device().map_err(|e| e.to_string())?;
    let mut animator = Animator::new(
        &device,
        &lib.library,
        &AnimatorDesc {
            max_instances: 1,
            max_joints: None,
            page_instances: None,
        },
    )
    .map_err(|e| e.to_string())?;
    animator
        .add_instance(&InstanceDesc {
            time: t as f32,
            rate: 0.0,
            loop_mode: LoopMode::Once,
            ..InstanceDesc::new(lib.clips[s][c])
        })
        .map_err(|e| e.to_string())?;
    animator.prepare(&queue, 0.0);
    let mut encoder = device.create_command_encoder(&Default::default());
    animator.encode(&mut encoder);
    queue.submit([encoder.finish()]);
    let (_, pose) = animator.read_back(&device, &queue).map_err(|e| e.to_string())?;
    let inst = animator.instances()[0];
    let range = inst.joint_offset as usize..(inst.joint_offset + inst.joint_count) as usize;
    let (model, palette) = match (pose.model.get(range.clone()), pose.palette.get(range)) {
        (Some(m), Some(p)) => (to_dmat(m), to_dmat(p)),
        _ => return Err("GPU read-back is shorter than the instance's joints".into()),
    };
    let vertices = match mesh0(imp, s) {
        Some(v) => Some(to_points(
            &wgpu_anim::gpu::skin_on_gpu(&device, &queue, &animator, inst.joint_offset, &v)
                .map_err(|e| e.to_string())?,
        )),
        None => None,
    };
    Ok(Evaluated {
        model,
        palette,
        vertices,
    })
}

fn mat_json(m: &DMat4) -> Value {
    json!(m.to_cols_array().to_vec())
}

fn print_json(
    file: &str,
    clip: usize,
    clip_name: &str,
    time: f64,
    sampled: f64,
    path: EvalPath,
    pose: &GltfPose,
) -> Result<(), String> {
    let joints: Vec<Value> = pose
        .joints
        .iter()
        .map(|j| {
            let mut o = serde_json::Map::new();
            if let Some(i) = j.index {
                o.insert("index".into(), json!(i));
            }
            o.insert("node".into(), json!(j.node));
            o.insert("name".into(), json!(j.name));
            o.insert("world".into(), mat_json(&j.world));
            Value::Object(o)
        })
        .collect();
    let v = json!({
        "asset": file,
        "clip": clip,
        "clip_name": clip_name,
        "time": time,
        "sampled_time": sampled,
        "time_rule": "clamped to [first key, last key]; no looping",
        "weights": "normalized (WEIGHTS_0 divided by their sum)",
        "evaluated_on": path.name(),
        "skinned": pose.skinned,
        "joints": joints,
        "skin_matrices": pose.skin_matrices.iter().map(mat_json).collect::<Vec<_>>(),
        "vertices": pose.vertices.iter().map(|v| json!([v.x, v.y, v.z])).collect::<Vec<_>>(),
    });
    outln!("{v}");
    Ok(())
}

fn print_summary(
    file: &str,
    clip: usize,
    clip_name: &str,
    sampled: f64,
    path: EvalPath,
    pose: &GltfPose,
) -> Result<(), String> {
    outln!(
        "{file}: clip {clip} '{clip_name}' at {sampled:.4} s ({}), {} joints{}",
        path.name(),
        pose.joints.len(),
        if pose.skinned {
            " in skin order"
        } else {
            " in node order"
        }
    );
    for j in pose.joints.iter().take(8) {
        let p = j.world.w_axis.truncate();
        outln!(
            "  {:<24} node {:>3}  at ({:.4}, {:.4}, {:.4})",
            j.name,
            j.node,
            p.x,
            p.y,
            p.z
        );
    }
    if pose.joints.len() > 8 {
        outln!("  … {} more (use --json for all)", pose.joints.len() - 8);
    }
    if !pose.vertices.is_empty() {
        let (lo, hi) = pose
            .vertices
            .iter()
            .fold((DVec3::splat(f64::MAX), DVec3::splat(f64::MIN)), |(lo, hi), v| {
                (lo.min(*v), hi.max(*v))
            });
        outln!(
            "  mesh 0/0: {} skinned vertices, bounds ({:.4}, {:.4}, {:.4}) .. ({:.4}, {:.4}, {:.4})",
            pose.vertices.len(),
            lo.x,
            lo.y,
            lo.z,
            hi.x,
            hi.y,
            hi.z
        );
    }
    Ok(())
}

/// A perspective camera slightly above and in front (+Z) of the box `lo..hi`, turned a little to
/// the side, at the distance where every corner of the box is inside the picture with a margin.
fn frame_box(lo: Vec3, hi: Vec3, aspect: f32) -> Camera {
    let fov_y = 35f32.to_radians();
    let margin = 1.12;
    let centre = (lo + hi) * 0.5;
    let to_eye = Vec3::new(0.45, 0.38, 1.0).normalize();
    let right = Vec3::Y.cross(to_eye).normalize();
    let up = to_eye.cross(right);
    let (ty, tx) = ((fov_y * 0.5).tan() / margin, (fov_y * 0.5).tan() * aspect / margin);
    let radius = ((hi - lo) * 0.5).length();
    let mut distance: f32 = 0.0;
    for k in 0..8 {
        let corner = Vec3::new(
            if k & 1 == 0 { lo.x } else { hi.x },
            if k & 2 == 0 { lo.y } else { hi.y },
            if k & 4 == 0 { lo.z } else { hi.z },
        ) - centre;
        let (x, y, z) = (corner.dot(right), corner.dot(up), corner.dot(to_eye));
        distance = distance.max(z + x.abs() / tx).max(z + y.abs() / ty);
    }
    let distance = if distance.is_finite() && distance > 0.0 {
        distance.max(radius * 1.01)
    } else {
        1.0
    };
    let near = (distance - radius).max(distance * 0.01) * 0.5;
    let far = (distance + radius) * 4.0 + 100.0;
    Camera::look_at(centre + to_eye * distance, centre, fov_y, aspect, near, far)
}

fn render(a: &RenderArgs) -> Result<(), String> {
    let Size { width, height } = a.size;
    let imp = load(&a.file)?;
    let file = a.file.display().to_string();
    let animation = find_animation(&imp, &file, &a.clip)?;
    let s = Character::skeleton_of(&imp).map_err(|e| e.to_string())?;
    let c = imp.skeletons[s]
        .clip_of_animation(animation)
        .ok_or_else(|| format!("{file}: animation {animation} does not animate the skeleton that has the mesh"))?;
    let source = clip_source(a.compressed.as_deref())?;
    let character = Character::from_imported_with(&imp, s, &source).map_err(|e| e.to_string())?;
    let clip = character.clips[c];
    let duration = character.library.clip_duration(clip).unwrap_or(0.0);

    // Instances on a grid facing +Z, times spread over the clip; the posed box of each from the
    // CPU mirror, in the world.
    let (lo, hi) = character.posed_bounds(clip, a.time);
    let size = (hi - lo) * character.scale;
    let gap = size.max_element() * 0.15;
    let (sx, sz) = (size.x + gap, size.z + gap);
    let side = (a.count as f32).sqrt().ceil() as u32;
    let rows = a.count.div_ceil(side);
    let mut instances = Vec::with_capacity(a.count as usize);
    let (mut wlo, mut whi) = (Vec3::splat(f32::MAX), Vec3::splat(f32::MIN));
    for i in 0..a.count {
        let (col, row) = (i % side, i / side);
        let position = Vec2::new(
            (col as f32 - (side - 1) as f32 * 0.5) * sx,
            (row as f32 - (rows - 1) as f32 * 0.5) * sz,
        );
        let time = if i == 0 || duration <= 0.0 {
            a.time
        } else {
            (a.time + duration * i as f32 / a.count as f32).rem_euclid(duration)
        };
        let world = character.world(position, 0.0);
        let (plo, phi) = character.posed_bounds(clip, time);
        for k in 0..8 {
            let p = world.transform_point3(Vec3::new(
                if k & 1 == 0 { plo.x } else { phi.x },
                if k & 2 == 0 { plo.y } else { phi.y },
                if k & 4 == 0 { plo.z } else { phi.z },
            ));
            (wlo, whi) = (wlo.min(p), whi.max(p));
        }
        instances.push((world, time));
    }
    if !(wlo.is_finite() && whi.is_finite()) {
        return Err(format!("{file}: the posed model has no finite bounds"));
    }
    // Stand the lowest point on the ground (y = 0).
    let lift = Mat4::from_translation(Vec3::new(0.0, -wlo.y, 0.0));
    (whi.y, wlo.y) = (whi.y - wlo.y, 0.0);

    let (device, queue) = wgpu_anim::gpu::headless_device().map_err(|e| e.to_string())?;
    let mut animator = Animator::new(
        &device,
        &character.library,
        &AnimatorDesc {
            max_instances: a.count,
            max_joints: None,
            page_instances: None,
        },
    )
    .map_err(|e| e.to_string())?;
    for (world, time) in &instances {
        animator
            .add_instance(&InstanceDesc {
                time: *time,
                rate: 0.0,
                loop_mode: LoopMode::Once,
                world: lift * *world,
                tint: [225, 170, 120, 255],
                ..InstanceDesc::new(clip)
            })
            .map_err(|e| e.to_string())?;
    }
    let joints = imp.skeletons[s].skeleton.joint_count();
    let target = OffscreenTarget::new(&device, width, height).map_err(|e| e.to_string())?;
    let renderer = SkinnedRenderer::new(
        &device,
        &animator,
        &character.mesh,
        joints,
        OffscreenTarget::COLOR_FORMAT,
        Some(OffscreenTarget::DEPTH_FORMAT),
        1,
    )
    .map_err(|e| e.to_string())?;
    let ground = (!a.no_ground).then(|| {
        GroundRenderer::new(
            &device,
            OffscreenTarget::COLOR_FORMAT,
            Some(OffscreenTarget::DEPTH_FORMAT),
            1,
        )
    });
    let camera = frame_box(wlo, whi, width as f32 / height as f32);
    renderer.set_camera(&queue, &camera);
    if let Some(g) = &ground {
        g.set_camera(&queue, &camera);
    }
    animator.prepare(&queue, 0.0);
    let mut encoder = device.create_command_encoder(&Default::default());
    animator.encode(&mut encoder);
    {
        let (mut pass, _views) = target.begin_pass(&mut encoder, GroundRenderer::SKY);
        if let Some(g) = &ground {
            g.draw(&mut pass);
        }
        renderer.draw(&mut pass, 0..a.count);
    }
    queue.submit([encoder.finish()]);
    let rgba = target.read_rgba(&device, &queue).map_err(|e| e.to_string())?;
    wgpu_anim::image::save_png(&a.out, width, height, &rgba).map_err(|e| e.to_string())?;
    outln!(
        "wrote {} ({}x{}): {file}, clip {animation} '{}' at {} s, {} instance{}",
        a.out.display(),
        width,
        height,
        imp.animations[animation].name,
        a.time,
        a.count,
        if a.count == 1 { "" } else { "s" }
    );
    Ok(())
}

fn run_bench(a: &BenchArgs) -> Result<(), String> {
    let config = Config {
        counts: a.characters.clone(),
        frames: a.frames,
        workloads: a.workloads.clone(),
        clip_formats: a.clip_format.clone(),
        paths: a.paths.clone(),
        threads: a.threads,
        ..Config::default()
    };
    let (device, queue) = wgpu_anim::gpu::headless_device().map_err(|e| e.to_string())?;
    let report = bench::run(&device, &queue, &config, &mut |line| eprintln!("{line}")).map_err(|e| e.to_string())?;
    outln!(
        "One animation frame, medians of {} frames; device: {}; {}",
        config.frames,
        report.device,
        report.date
    );
    outln!();
    out!("{}", bench::markdown_table(&report.rows));
    if !report.formats.is_empty() {
        outln!("\nThe sample pass, raw and compressed clips in alternate frames:\n");
        out!("{}", bench::formats_table(&report.formats));
    }
    for note in &report.notes {
        outln!("note: {note}");
    }
    if let Some(path) = &a.json {
        let text = serde_json::to_string_pretty(&report.rows).map_err(|e| e.to_string())?;
        std::fs::write(path, text + "\n").map_err(|e| format!("{}: cannot write: {e}", path.display()))?;
        eprintln!("wrote {}", path.display());
    }
    if let Some(path) = &a.plot {
        let title = format!("One animation frame — {}", report.device);
        bench::plot::save(path, &report.rows, &title).map_err(|e| e.to_string())?;
        eprintln!("wrote {}", path.display());
    }
    Ok(())
}

fn compress(a: &CompressArgs) -> Result<(), String> {
    use wgpu_anim::offline::compress::{self, CompressionSettings};
    use wgpu_anim::offline::compressed_file::{self, CompressedFile};
    let imp = load(&a.file)?;
    let file = a.file.display().to_string();
    let s = imp
        .primary_skeleton()
        .ok_or_else(|| format!("{file}: nothing to animate (no nodes)"))?;
    let sk = &imp.skeletons[s];
    let chosen: Vec<usize> = match &a.clip {
        Some(c) => {
            let animation = find_animation(&imp, &file, c)?;
            vec![
                sk.clip_of_animation(animation)
                    .ok_or_else(|| format!("{file}: animation {animation} does not animate the first skeleton"))?,
            ]
        }
        None => (0..sk.clips.len()).collect(),
    };
    if chosen.is_empty() {
        return Err(format!("{file}: no clip to compress"));
    }
    let settings = CompressionSettings {
        threshold_cm: a.threshold,
        shell_cm: a.shell,
        unit_cm: a.unit_cm,
        rotation_tolerance: a.rotation_tolerance,
        skin_tolerance: a.skin_tolerance,
        segment_frames: a.segment_frames,
        ..CompressionSettings::default()
    };
    let mut reports = Vec::new();
    let mut clips = Vec::new();
    for (n, &c) in chosen.iter().enumerate() {
        let mut clip = sk.clips[c].clip.clone();
        if let Some(rate) = a.rate {
            clip = compress::resample(&sk.skeleton, &clip, rate).map_err(|e| format!("{file}: {e}"))?;
        }
        eprintln!(
            "compressing clip {}/{} '{}' ({:.2} s)",
            n + 1,
            chosen.len(),
            clip.name,
            clip.duration
        );
        let (compressed, report) =
            compress::compress(&sk.skeleton, &clip, &settings).map_err(|e| format!("{file}: {e}"))?;
        clips.push(compressed);
        reports.push(report);
    }
    if let Some(out) = &a.out {
        let contents = CompressedFile {
            skeleton: sk.skeleton.name().to_owned(),
            joints: sk.skeleton.joint_names().to_vec(),
            clips,
        };
        compressed_file::write(out, &contents).map_err(|e| e.to_string())?;
        eprintln!("wrote {}", out.display());
    }
    if a.json {
        let rows: Vec<Value> = reports
            .iter()
            .map(|r| {
                json!({
                    "clip": r.clip,
                    "joints": r.joints,
                    "animated_tracks": r.animated_tracks,
                    "packed_tracks": r.packed_tracks,
                    "constant_tracks": r.constant_tracks,
                    "raw_tracks": r.raw_tracks,
                    "samples": r.samples,
                    "sample_rate": r.sample_rate,
                    "raw_bytes": r.raw_bytes,
                    "compressed_bytes": r.compressed_bytes,
                    "ratio": r.ratio(),
                    "bytes_per_joint_sample": r.bytes_per_joint_sample(),
                    "max_error_cm": r.max_error_cm,
                    "p99_error_cm": r.p99_error_cm,
                    "max_error_joint": r.max_error_joint,
                    "max_error_time": r.max_error_time,
                    "max_rotation_error": r.max_rotation_error,
                    "max_skin_error": r.max_skin_error,
                    "seconds": r.seconds,
                })
            })
            .collect();
        let doc = json!({
            "file": file,
            "threshold_cm": a.threshold,
            "shell_cm": a.shell,
            "unit_cm": a.unit_cm,
            "rotation_tolerance": a.rotation_tolerance,
            "skin_tolerance": a.skin_tolerance,
            "segment_frames": a.segment_frames,
            "clips": rows,
        });
        outln!("{}", serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())?);
        return Ok(());
    }
    outln!(
        "{file}: threshold {} cm on a {} cm shell, {} cm per unit, rotation tolerance {}, skin tolerance {}, segments of {} frames",
        a.threshold,
        a.shell,
        a.unit_cm,
        a.rotation_tolerance,
        a.skin_tolerance,
        a.segment_frames
    );
    outln!();
    outln!(
        "| clip | joints | animated tracks | samples | raw bytes | compressed bytes | ratio | B/joint-sample | max error cm (joint, s) | p99 cm | time s |"
    );
    outln!("|---|--:|--:|--:|--:|--:|--:|--:|---|--:|--:|");
    for r in &reports {
        outln!(
            "| {} | {} | {} | {} ({} Hz) | {} | {} | {:.1}:1 | {:.2} | {:.4} ({}, {:.3}) | {:.4} | {:.2} |",
            r.clip,
            r.joints,
            r.animated_tracks,
            r.samples,
            r.sample_rate.round(),
            r.raw_bytes,
            r.compressed_bytes,
            r.ratio(),
            r.bytes_per_joint_sample(),
            r.max_error_cm,
            r.max_error_joint,
            r.max_error_time,
            r.p99_error_cm,
            r.seconds
        );
    }
    for r in &reports {
        for t in &r.raw_tracks {
            outln!("{}: kept raw: {t}", r.clip);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn bench_defaults_are_the_library_defaults() {
        let Command::Bench(a) = Cli::parse_from(["wgpu-anim", "bench"]).command else {
            panic!("bench parses as bench");
        };
        let d = Config::default();
        assert_eq!(a.characters, d.counts);
        assert_eq!(a.frames, d.frames);
        assert_eq!(a.workloads, d.workloads);
        assert_eq!(a.paths, d.paths);
        assert_eq!(a.threads, d.threads);
    }
}
