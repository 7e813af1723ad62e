//! A log–log line chart of frame time against character count, drawn into an RGBA buffer with
//! no dependencies: lines, axes, ticks, grid, a legend of coloured swatches and labels in a
//! built-in 5×7 bitmap font.

use super::{PathKind, Row};
use crate::error::Result;
use std::path::Path;

type Rgba = [u8; 4];
/// A line: workload index, path, (characters, ms) points.
type Series = (usize, PathKind, Vec<(f64, f64)>);

const BACKGROUND: Rgba = [255, 255, 255, 255];
const INK: Rgba = [30, 30, 30, 255];
const GRID: Rgba = [225, 225, 225, 255];
const SUBTLE: Rgba = [110, 110, 110, 255];

/// An RGBA8 image being drawn on.
struct Canvas {
    width: u32,
    height: u32,
    px: Vec<u8>,
}

impl Canvas {
    fn new(width: u32, height: u32) -> Self {
        let mut px = Vec::with_capacity(width as usize * height as usize * 4);
        for _ in 0..width * height {
            px.extend_from_slice(&BACKGROUND);
        }
        Self { width, height, px }
    }

    fn put(&mut self, x: i32, y: i32, c: Rgba) {
        if x < 0 || y < 0 || x >= self.width as i32 || y >= self.height as i32 {
            return;
        }
        let i = (y as usize * self.width as usize + x as usize) * 4;
        self.px[i..i + 4].copy_from_slice(&c);
    }

    fn rect(&mut self, x: i32, y: i32, w: i32, h: i32, c: Rgba) {
        for yy in y..y + h {
            for xx in x..x + w {
                self.put(xx, yy, c);
            }
        }
    }

    /// A line of `thickness` pixels; `dash` = (on, off) lengths in pixels, or `None` for solid.
    fn line(&mut self, (x0, y0): (f32, f32), (x1, y1): (f32, f32), thickness: f32, c: Rgba, dash: Option<(f32, f32)>) {
        let len = ((x1 - x0).powi(2) + (y1 - y0).powi(2)).sqrt();
        let steps = (len * 2.0).ceil().max(1.0) as i32;
        let r = thickness * 0.5;
        for k in 0..=steps {
            let t = k as f32 / steps as f32;
            if let Some((on, off)) = dash {
                if (t * len) % (on + off) > on {
                    continue;
                }
            }
            let (x, y) = (x0 + (x1 - x0) * t, y0 + (y1 - y0) * t);
            let ri = r.ceil() as i32;
            for dy in -ri..=ri {
                for dx in -ri..=ri {
                    if (dx * dx + dy * dy) as f32 <= r * r + 0.25 {
                        self.put(x.round() as i32 + dx, y.round() as i32 + dy, c);
                    }
                }
            }
        }
    }

    /// Text in the 5×7 font at `scale` pixels per font pixel, top-left at (x, y).
    fn text(&mut self, x: i32, y: i32, s: &str, scale: i32, c: Rgba) {
        for (k, ch) in s.chars().enumerate() {
            let cols = glyph(ch);
            let ox = x + k as i32 * 6 * scale;
            for (cx, col) in cols.iter().enumerate() {
                for cy in 0..7 {
                    if col >> cy & 1 == 1 {
                        self.rect(ox + cx as i32 * scale, y + cy * scale, scale, scale, c);
                    }
                }
            }
        }
    }

    /// Text rotated a quarter turn counter-clockwise (reading bottom to top), its glyphs' tops
    /// at x, the text ending at y.
    fn text_up(&mut self, x: i32, y: i32, s: &str, scale: i32, c: Rgba) {
        for (k, ch) in s.chars().enumerate() {
            let cols = glyph(ch);
            let oy = y - k as i32 * 6 * scale;
            for (cx, col) in cols.iter().enumerate() {
                for cy in 0..7 {
                    if col >> cy & 1 == 1 {
                        self.rect(x + cy * scale, oy - (cx as i32 + 1) * scale, scale, scale, c);
                    }
                }
            }
        }
    }
}

fn text_width(s: &str, scale: i32) -> i32 {
    (s.chars().count() as i32 * 6 - 1).max(0) * scale
}

/// The classic 5×7 font, one byte per column, bit 0 at the top. Lower case prints as upper case;
/// unknown characters print as a box.
fn glyph(c: char) -> [u8; 5] {
    match c.to_ascii_uppercase() {
        ' ' => [0x00, 0x00, 0x00, 0x00, 0x00],
        '%' => [0x23, 0x13, 0x08, 0x64, 0x62],
        '(' => [0x00, 0x1C, 0x22, 0x41, 0x00],
        ')' => [0x00, 0x41, 0x22, 0x1C, 0x00],
        '+' => [0x08, 0x08, 0x3E, 0x08, 0x08],
        ',' => [0x00, 0x50, 0x30, 0x00, 0x00],
        '-' => [0x08, 0x08, 0x08, 0x08, 0x08],
        '.' => [0x00, 0x60, 0x60, 0x00, 0x00],
        '/' => [0x20, 0x10, 0x08, 0x04, 0x02],
        '0' => [0x3E, 0x51, 0x49, 0x45, 0x3E],
        '1' => [0x00, 0x42, 0x7F, 0x40, 0x00],
        '2' => [0x42, 0x61, 0x51, 0x49, 0x46],
        '3' => [0x21, 0x41, 0x45, 0x4B, 0x31],
        '4' => [0x18, 0x14, 0x12, 0x7F, 0x10],
        '5' => [0x27, 0x45, 0x45, 0x45, 0x39],
        '6' => [0x3C, 0x4A, 0x49, 0x49, 0x30],
        '7' => [0x01, 0x71, 0x09, 0x05, 0x03],
        '8' => [0x36, 0x49, 0x49, 0x49, 0x36],
        '9' => [0x06, 0x49, 0x49, 0x29, 0x1E],
        ':' => [0x00, 0x36, 0x36, 0x00, 0x00],
        '=' => [0x14, 0x14, 0x14, 0x14, 0x14],
        'A' => [0x7E, 0x11, 0x11, 0x11, 0x7E],
        'B' => [0x7F, 0x49, 0x49, 0x49, 0x36],
        'C' => [0x3E, 0x41, 0x41, 0x41, 0x22],
        'D' => [0x7F, 0x41, 0x41, 0x22, 0x1C],
        'E' => [0x7F, 0x49, 0x49, 0x49, 0x41],
        'F' => [0x7F, 0x09, 0x09, 0x01, 0x01],
        'G' => [0x3E, 0x41, 0x41, 0x51, 0x32],
        'H' => [0x7F, 0x08, 0x08, 0x08, 0x7F],
        'I' => [0x00, 0x41, 0x7F, 0x41, 0x00],
        'J' => [0x20, 0x40, 0x41, 0x3F, 0x01],
        'K' => [0x7F, 0x08, 0x14, 0x22, 0x41],
        'L' => [0x7F, 0x40, 0x40, 0x40, 0x40],
        'M' => [0x7F, 0x02, 0x04, 0x02, 0x7F],
        'N' => [0x7F, 0x04, 0x08, 0x10, 0x7F],
        'O' => [0x3E, 0x41, 0x41, 0x41, 0x3E],
        'P' => [0x7F, 0x09, 0x09, 0x09, 0x06],
        'Q' => [0x3E, 0x41, 0x51, 0x21, 0x5E],
        'R' => [0x7F, 0x09, 0x19, 0x29, 0x46],
        'S' => [0x46, 0x49, 0x49, 0x49, 0x31],
        'T' => [0x01, 0x01, 0x7F, 0x01, 0x01],
        'U' => [0x3F, 0x40, 0x40, 0x40, 0x3F],
        'V' => [0x1F, 0x20, 0x40, 0x20, 0x1F],
        'W' => [0x7F, 0x20, 0x18, 0x20, 0x7F],
        'X' => [0x63, 0x14, 0x08, 0x14, 0x63],
        'Y' => [0x03, 0x04, 0x78, 0x04, 0x03],
        'Z' => [0x61, 0x51, 0x49, 0x45, 0x43],
        '_' => [0x40, 0x40, 0x40, 0x40, 0x40],
        _ => [0x7F, 0x41, 0x41, 0x41, 0x7F],
    }
}

/// Colour of a (workload, path) series: one hue per workload (blue, orange, green, purple),
/// darkest for the GPU paths.
fn colour(workload_index: usize, path: PathKind) -> Rgba {
    let shade = match path {
        PathKind::GpuStaged | PathKind::GpuFused => 0,
        PathKind::Cpu1 => 1,
        _ => 2,
    };
    const PALETTE: [[Rgba; 3]; 4] = [
        [[31, 90, 180, 255], [70, 150, 230, 255], [120, 190, 250, 255]],
        [[200, 80, 10, 255], [240, 140, 40, 255], [250, 190, 90, 255]],
        [[30, 140, 60, 255], [80, 190, 100, 255], [150, 220, 150, 255]],
        [[140, 40, 160, 255], [190, 90, 210, 255], [220, 150, 235, 255]],
    ];
    PALETTE[workload_index % PALETTE.len()][shade]
}

/// Line pattern of a path: solid for gpu-staged, long dashes for gpu-fused, medium dashes for
/// cpu-1, dots for cpu-all.
fn dash(path: PathKind) -> Option<(f32, f32)> {
    match path {
        PathKind::GpuStaged => None,
        PathKind::GpuFused => Some((18.0, 5.0)),
        PathKind::Cpu1 => Some((8.0, 6.0)),
        _ => Some((3.0, 4.0)),
    }
}

/// 1, 2, 5 × powers of ten within `[lo, hi]`.
fn nice_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let mut out = Vec::new();
    let mut e = lo.log10().floor() as i32 - 1;
    while 10f64.powi(e) <= hi * 10.0 {
        for m in [1.0, 2.0, 5.0] {
            let v = m * 10f64.powi(e);
            if v >= lo * 0.999 && v <= hi * 1.001 {
                out.push(v);
            }
        }
        e += 1;
    }
    out
}

fn label(v: f64, thousands: bool) -> String {
    if thousands && v >= 1000.0 {
        let k = v / 1000.0;
        return if k >= 1000.0 {
            format!("{}M", k / 1000.0)
        } else {
            format!("{k}K")
        };
    }
    if v >= 1.0 {
        format!("{v}")
    } else {
        let s = format!("{v:.4}");
        s.trim_end_matches('0').to_string()
    }
}

/// The chart of `rows`: for each workload and path, frame time (GPU time when the row has
/// timestamps, else wall-clock frame time) against characters, both axes logarithmic.
#[must_use]
pub fn draw(rows: &[Row], title: &str, width: u32, height: u32) -> Vec<u8> {
    let mut cv = Canvas::new(width, height);
    let (left, right, top, bottom) = (80, width as i32 - 300, 50, height as i32 - 60);
    let mut workloads: Vec<&str> = Vec::new();
    let mut series: Vec<Series> = Vec::new();
    for r in rows {
        let wi = match workloads.iter().position(|w| *w == r.workload) {
            Some(i) => i,
            None => {
                workloads.push(&r.workload);
                workloads.len() - 1
            }
        };
        let p = (f64::from(r.characters), r.headline_ms().max(1e-6));
        match series.iter_mut().find(|(w, path, _)| *w == wi && *path == r.path) {
            Some(s) => s.2.push(p),
            None => series.push((wi, r.path, vec![p])),
        }
    }
    let xs = || series.iter().flat_map(|s| s.2.iter().map(|p| p.0));
    let ys = || series.iter().flat_map(|s| s.2.iter().map(|p| p.1));
    let (x_lo, x_hi) = (
        xs().fold(f64::INFINITY, f64::min).min(1e9) / 1.4,
        xs().fold(0.0, f64::max).max(1.0) * 1.4,
    );
    let (y_lo, y_hi) = (
        ys().fold(f64::INFINITY, f64::min).min(1e9) / 1.6,
        ys().fold(0.0, f64::max).max(1e-3) * 1.6,
    );
    let (x_lo, x_hi) = if x_hi / x_lo < 4.0 {
        (x_lo / 2.0, x_hi * 2.0)
    } else {
        (x_lo, x_hi)
    };
    let (y_lo, y_hi) = if y_hi / y_lo < 4.0 {
        (y_lo / 2.0, y_hi * 2.0)
    } else {
        (y_lo, y_hi)
    };
    let sx = |x: f64| left as f32 + ((x / x_lo).ln() / (x_hi / x_lo).ln()) as f32 * (right - left) as f32;
    let sy = |y: f64| bottom as f32 - ((y / y_lo).ln() / (y_hi / y_lo).ln()) as f32 * (bottom - top) as f32;

    // Grid and ticks.
    for v in nice_ticks(x_lo, x_hi) {
        let x = sx(v).round() as i32;
        cv.rect(x, top, 1, bottom - top, GRID);
        cv.rect(x, bottom, 1, 6, INK);
        let l = label(v, true);
        cv.text(x - text_width(&l, 2) / 2, bottom + 10, &l, 2, INK);
    }
    for v in nice_ticks(y_lo, y_hi) {
        let y = sy(v).round() as i32;
        cv.rect(left, y, right - left, 1, GRID);
        cv.rect(left - 6, y, 6, 1, INK);
        let l = label(v, false);
        cv.text(left - 10 - text_width(&l, 2), y - 7, &l, 2, INK);
    }
    // Axes.
    cv.rect(left, top, 1, bottom - top + 1, INK);
    cv.rect(left, bottom, right - left + 1, 1, INK);
    let xl = "CHARACTERS (LOG)";
    cv.text((left + right) / 2 - text_width(xl, 2) / 2, bottom + 36, xl, 2, INK);
    cv.text_up(
        8,
        (top + bottom) / 2 + text_width("FRAME MS (LOG)", 2) / 2,
        "FRAME MS (LOG)",
        2,
        INK,
    );
    cv.text(left, 14, title, 2, INK);

    // Series.
    for (wi, path, pts) in &mut series {
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        let c = colour(*wi, *path);
        for w in pts.windows(2) {
            cv.line((sx(w[0].0), sy(w[0].1)), (sx(w[1].0), sy(w[1].1)), 3.0, c, dash(*path));
        }
        for p in pts.iter() {
            let (x, y) = (sx(p.0).round() as i32, sy(p.1).round() as i32);
            cv.rect(x - 4, y - 4, 9, 9, c);
        }
    }

    // Legend: a swatch of each series' colour and line style, and its name.
    let lx = right + 20;
    let mut ly = top + 4;
    for (wi, path, _) in &series {
        let c = colour(*wi, *path);
        cv.rect(lx, ly, 14, 14, c);
        cv.line(
            (lx as f32 + 20.0, ly as f32 + 7.0),
            (lx as f32 + 56.0, ly as f32 + 7.0),
            3.0,
            c,
            dash(*path),
        );
        cv.text(lx + 64, ly, workloads[*wi], 2, INK);
        cv.text(lx + 64, ly + 17, path.name(), 2, SUBTLE);
        ly += 44;
    }
    cv.text(lx, ly + 8, "GPU TIME, OR FRAME", 2, SUBTLE);
    cv.text(lx, ly + 26, "TIME WITHOUT", 2, SUBTLE);
    cv.text(lx, ly + 44, "TIMESTAMPS", 2, SUBTLE);
    cv.px
}

/// Draws [`draw`]'s chart at 1100×640 and saves it as a PNG.
pub fn save(path: &Path, rows: &[Row], title: &str) -> Result<()> {
    let (w, h) = (1100, 640);
    crate::image::save_png(path, w, h, &draw(rows, title, w, h))
}
