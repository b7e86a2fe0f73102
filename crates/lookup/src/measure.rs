//! One repetition of one lookup variant: the directory built and loaded, the searches
//! run directly or through a dispatching server, the figures every cell reports. Not
//! here: which variants exist ([`crate::registry`]).

use harness::{CellFailure, Measurement, Params, RunSettings};

use crate::directory::{Directory, DirectoryData};
use crate::dispatch::{Dispatch, DispatchConfig, Server};
use crate::variants::{self, Design, WithDirectory};
use crate::workload::{KeyDistribution, LookupWorkload, WorkloadShape};

/// One repetition of variant `name` (its registry entry's [`harness::Variant::measure`]).
pub fn measure(
    name: Design,
    params: &Params,
    settings: RunSettings,
) -> Result<Measurement, CellFailure> {
    let data = DirectoryData::generate(params.count("users"), params.count("groups"));
    let shape = WorkloadShape {
        write_pct: params.count("write_pct") as u32,
        keys: KeyDistribution::parse(params.word("keys")).map_err(CellFailure::new)?,
        seed: 0x389d5,
    };
    let cache_entries = params.count("cache_entries");
    let dispatch = DispatchConfig {
        dispatch: Dispatch::parse(params.word("dispatch")).map_err(CellFailure::new)?,
        threads: settings.threads,
        connections: params.count("connections"),
        in_flight: params.count("in_flight"),
        batch: params.count("batch"),
    };
    let measure = MeasureOnce {
        data: &data,
        shape,
        settings,
        dispatch,
    };
    variants::with_directory(name, &data, cache_entries, measure).map_err(CellFailure::new)?
}

/// Runs one repetition over whichever directory it is handed.
struct MeasureOnce<'a> {
    data: &'a DirectoryData,
    shape: WorkloadShape,
    settings: RunSettings,
    dispatch: DispatchConfig,
}

impl WithDirectory for MeasureOnce<'_> {
    type Output = Result<Measurement, CellFailure>;
    fn call<D: Directory>(self, dir: std::sync::Arc<D>) -> Self::Output {
        let workload = LookupWorkload::new(dir, self.data, self.shape);
        if self.dispatch.dispatch == Dispatch::Direct {
            // The same time account as the dispatching servers give, so that a chart
            // against `dispatch` has every point: no hand-off, every wait in the directory.
            let mut m = harness::runner::run(&workload, self.settings)?;
            let directory = m.wait_share().unwrap_or(0.0);
            m.extra.insert("queue_wait_share".into(), 0.0.into());
            m.extra
                .insert("directory_wait_share".into(), directory.into());
            return Ok(m);
        }
        Server::start(&workload, self.dispatch)
            .map_err(CellFailure::new)?
            .measure(self.settings)
    }
}
