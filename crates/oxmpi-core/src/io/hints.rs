//! The file's hints (`MPI_Info` keys of MPI-IO: collective buffering, two-phase
//! aggregators and buffer sizes) and how an info object updates them.

/// `romio_cb_read`/`romio_cb_write`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CbMode {
    Enable,
    Disable,
    Automatic,
}

impl CbMode {
    pub(super) fn name(self) -> &'static str {
        match self {
            CbMode::Enable => "enable",
            CbMode::Disable => "disable",
            CbMode::Automatic => "automatic",
        }
    }
    fn parse(s: &str) -> Option<CbMode> {
        match s.trim().to_ascii_lowercase().as_str() {
            "enable" => Some(CbMode::Enable),
            "disable" => Some(CbMode::Disable),
            "automatic" => Some(CbMode::Automatic),
            _ => None,
        }
    }
}

/// The hints oxmpi uses (others are accepted and ignored, as MPI allows).
#[derive(Clone, Debug)]
pub struct Hints {
    /// Bytes an aggregator handles per round of two-phase I/O.
    pub cb_buffer_size: u64,
    /// Aggregators wanted (`None`: one per host).
    pub cb_nodes: Option<usize>,
    pub cb_read: CbMode,
    pub cb_write: CbMode,
    /// File domains of aggregators are aligned to this (0: 1 MiB when large).
    pub striping_unit: u64,
    pub striping_factor: Option<u64>,
    /// `oxmpi_cb_window`: move two-phase pieces between ranks of one host
    /// through the aggregator's shared-memory window (default) or by messages.
    pub cb_window: bool,
}

impl Default for Hints {
    fn default() -> Hints {
        Hints {
            cb_buffer_size: 16 << 20,
            cb_nodes: None,
            cb_read: CbMode::Automatic,
            cb_write: CbMode::Automatic,
            striping_unit: 0,
            striping_factor: None,
            cb_window: true,
        }
    }
}

impl Hints {
    /// Applies the hints of `kv` it knows; values it cannot parse are ignored.
    pub fn apply(&mut self, kv: &[(String, String)]) {
        for (k, v) in kv {
            let num = v.trim().parse::<u64>().ok().filter(|&n| n > 0);
            match k.as_str() {
                "cb_buffer_size" => {
                    self.cb_buffer_size =
                        num.map_or(self.cb_buffer_size, |n| n.clamp(4096, 1 << 30))
                }
                "cb_nodes" => self.cb_nodes = num.map(|n| n as usize).or(self.cb_nodes),
                "romio_cb_read" => self.cb_read = CbMode::parse(v).unwrap_or(self.cb_read),
                "romio_cb_write" => self.cb_write = CbMode::parse(v).unwrap_or(self.cb_write),
                "striping_unit" => self.striping_unit = num.unwrap_or(self.striping_unit),
                "striping_factor" => self.striping_factor = num.or(self.striping_factor),
                "oxmpi_cb_window" => {
                    self.cb_window =
                        CbMode::parse(v).map_or(self.cb_window, |m| m != CbMode::Disable)
                }
                _ => {}
            }
        }
    }
}
