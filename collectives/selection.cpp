#include "selection.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "meshcomm/error.hpp"

namespace meshcomm::detail {

namespace {

constexpr std::array kAllKinds{CollectiveKind::all_gather, CollectiveKind::reduce_scatter, CollectiveKind::all_reduce,
                               CollectiveKind::all_to_all, CollectiveKind::all_to_allv, CollectiveKind::broadcast};
constexpr std::size_t KiB = 1024;
constexpr std::size_t MiB = 1024 * KiB;
/// Calls past one eager slot's payload (EagerMailbox::kPayloadBytes) start here.
constexpr std::size_t kPastOneSlot = 64 * KiB + 1;

}  // namespace

SelectionTable SelectionTable::measured_defaults() {
  SelectionTable table;
  // Rows are tried in order; the list order breaks ties. Figures behind them: perftests/HISTORY.md.
  // Measured at -np 2 on the 2-core development machine (perftests/HISTORY.md):
  // - small calls (each rank publishing at most 64 KiB) of ranks on one host: `eager`, through
  //   shared slots, wherever it runs: 1.1-1.9x the faster of Open MPI's blocking and nonblocking
  //   call from 8 B to 4 KiB and 1.4-3.9x from 4 to 128 KiB at -np 2 (broadcast of 8 B: 1.58-1.64x
  //   in a fast state of the AMD EPYC guest on 2026-12-01, 0.79-0.82x in a slow one, where Open
  //   MPI's root runs far ahead of its reader), 1.6-3.3x at -np 4, where every other path
  //   was 0.4-1.2x. Where each reader copies 32 KiB or more of an all-gather's or an all-to-all's
  //   payload, and the ranks have cores of their own, the readers copy it from the writer's buffer
  //   in one copy (eager_store_choice.hpp): at two ranks on 2026-11-29 (`all_gather_perf --backend
  //   mpi,ucx --algo eager,recursive_doubling`, three launches, out / in place) eager ran 1.08-1.18
  //   / 1.11-1.15x mpi_best at 80 KiB against recursive doubling's 0.81-0.93 / 0.83-0.96x, and
  //   1.02-1.16 / 1.08-1.14x at 128 KiB against 0.84-1.03 / 0.85-0.96x, on both backends; through
  //   the slots it had run 0.71-0.82x at 128 KiB, so recursive doubling had taken two ranks from 80
  //   KiB. Payloads read so take no room in the slots, so there it takes all-gathers and
  //   all-to-alls past the slots' 64 KiB a rank, up to the shm rows at 512 KiB: three launches each
  //   at two ranks on mpi (out / in place) ran the all-gather at 1.04-1.16 / 1.04-1.09x at 128 KiB
  //   and 1.05-1.09 / 1.03-1.10x at 256 KiB against recursive doubling's 0.96-1.02 / 0.91-0.96x and
  //   0.94-0.99 / 0.93-0.99x, the all-to-all out of place at 1.09-1.17x and 1.03-1.12x against
  //   pairwise's 0.96-0.98x and 0.96-1.05x. At two ranks on mpi and ucx its rows go on past 512
  //   KiB, before the shm rows, whose descriptor exchange hands plain buffers to the ring or
  //   pairwise: on the Intel VM on 2026-11-29 (the library with and without these rows, alternated
  //   launches, `--buffers both`, mpi_best / time, out / in place, user buffers) the all-gather ran
  //   0.95-1.08 / 1.01-1.14x at 512 KiB-2 MiB against 0.88-1.03 / 0.88-1.00x (two launches on mpi,
  //   two on ucx), and the all-to-all out of place 1.02-1.13x at 512 KiB-4 MiB against 0.88-0.99x;
  //   on allocate_shared buffers, which it reads through its mappings, level or ahead there
  //   (all-gather 1.42-1.58x against 1.24-1.60x out of place). At 8 MiB the two all-to-alls run
  //   level. The all-gather's row goes on at every size: once its readers copied the blocks in
  //   rank order (eager_mailbox.cpp), two launches per backend kind and buffer kind (`--algo
  //   eager,ring,shm -b 2M -e 64M -f 2` on mpi, `-f 4` on ucx) ran it level with or ahead of shm
  //   on shared buffers at 2-64 MiB (1.33-2.51 / 1.26-1.96x against 1.27-2.40 / 1.22-1.87x on
  //   mpi), and ahead of the ring that shm hands plain buffers to at every size (0.96-1.19 /
  //   0.98-1.09x against 0.90-1.14 / 0.91-0.99x on mpi). Eager declines these calls where ranks
  //   share cores (more ranks than the VM's two cores were not measured on cores of their own, so
  //   these rows stop at two). In place, past its slots, an all-to-all's two ranks of each pair
  //   swap their blocks between their buffers (EagerMailbox::swap_half_with): one and a half copies
  //   of each block where Open MPI's in-place call and pairwise make two. On the AMD EPYC guest on
  //   2026-12-01 (`alltoall_perf --backend mpi,ucx --algo auto,pairwise -b 128K -e 16M -f 2`, in
  //   place, mpi_best / time) it ran 1.42-2.54x on both backends in two launches in the guest's
  //   slower state, where pairwise ran 0.76-1.53x, and 1.00-1.87x in three in its faster one, where
  //   pairwise ran 0.68-1.19x (perftests/README.md). On allocate_shared buffers the shm all-to-all
  //   was ahead of the swaps at 11 of 12 points in three launches of four at 512 KiB-32 MiB
  //   (1.11-2.24x against 1.09-1.62x; in the fourth the swaps led, 1.33-2.05x against 1.22-1.69x),
  //   so from 512 KiB the swaps come behind the shm row, which hands them plain buffers, reserved
  //   on the slots behind its exchange of descriptors (`--buffers both --algo auto,shm,pairwise -b
  //   512K -e 64M -f 4`, two launches: 1.43-2.43x on plain buffers, pairwise 1.02-1.70x), and
  //   shared ones where its rank 0 measured them faster than its phases (on an Intel Xeon guest
  //   the swaps ran 1.24-2.32x at 1-16 MiB at two to four ranks, the phases 0.76-1.46x). At three
  //   and four ranks on the guest's two cores the swaps run too (eager_store_choice.cpp), and these
  //   rows reach four ranks: `--buffers both --algo auto,pairwise -b 96K -e 24M -f 4`, two launches
  //   each, ran the calls on plain buffers at 1.25-1.89x from 384 KiB, pairwise 0.82-1.24x.
  //   All-to-allv's counts differ by rank, so `eager` takes every call; a rank's blocks past its
  //   slot (40 KiB of blocks at two ranks, 48 KiB where ranks share cores: eager_all_to_allv.hpp)
  //   its peers read from its input, and only where they may not does every rank alike hand the
  //   call to pairwise (at three and four ranks on mpi and ucx, 56-512 KiB, the reads ran
  //   0.91-1.66x mpi_best where the hand-over ran 0.49-1.19x: eager_store_choice.cpp). On
  //   2026-11-28 (`alltoallv_perf --algo auto,pairwise`) 1.13-1.53x mpi_best from 12 B to 1.5 KiB and
  //   1.37-2.97x at 6-24 KiB at -np 2 on mpi, where pairwise ran 0.82-0.98x, and medians of
  //   1.06-1.61x where the blocks a rank sends its peer are 16-37 KiB (ten launches, the lowest
  //   0.90); 0.92-0.98x against pairwise's 0.97-0.99x where it then handed over (the tables'
  //   exchange); 1.15-2.36x at -np 3, 1.40-2.16x at -np 4;
  // - small messages: recursive doubling/halving beat MPI (1 round, no staging), except an
  //   all-gather of two ranks up to 4 KiB: there both are one exchange, and recursive doubling's
  //   own steps cost 3-10% of a 1 us call (0.88-1.03x native in two runs of 9 repeats);
  // - from 512 KiB the shm single-copy path wins 2-3x when buffers come from allocate_shared,
  //   and costs 1-3% at 512 KiB-1 MiB when they do not (its descriptor exchange through the
  //   eager slots: 1.3-2.1 us over the ring alone at two ranks, 1 MiB in place);
  // - the ring reduce-scatter beats MPI_Reduce_scatter_block 2-6x at every size;
  // - all-reduce on user buffers against the faster of MPI_Allreduce and MPI_Iallreduce:
  //   recursive doubling up to 64 KiB, the ring from 128 KiB (recursive doubling there is
  //   0.41-0.62x of it at -np 3 and 4). At two ranks on mpi and ucx, whose one exchange is a
  //   single copy each way, recursive doubling below 192 KiB, and out of place on one host below
  //   4 MiB. In place the buffer it sends is the one the call before has just written, so the
  //   peer's single copy reads lines this rank's core holds modified and this rank's reduction
  //   then writes lines the peer holds; how much that costs depends on the CPU (it sends a copy,
  //   recursive_doubling.cpp, which pays where the cores are far apart and costs where near).
  //   Five launches on the AMD EPYC VM on 2026-11-29 (`all_reduce_perf --backend mpi,ucx --algo
  //   ring,recursive_doubling`, mpi_best / time, out / in place): 1.88-2.00 / 0.96-1.12x at
  //   128 KiB against the ring's 1.18-1.37 / 0.83-1.09x, 1.71-2.27 / 0.94-1.04x at 256 KiB
  //   against 1.39-1.68 / 0.95-1.04x, 1.48-1.65 / 0.97-1.14x at 512 KiB against 1.37-1.54 /
  //   0.87-1.08x. Two launches each on the Intel Xeon VM the same day, both backends: 2.53-2.59 /
  //   0.91-0.93x at 128 KiB against the ring's 1.12-1.17 / 1.04-1.07x, 2.45-2.55 / 0.86-0.90x at
  //   192 KiB against 1.48-1.52 / 1.01-1.10x, 2.03-2.48 / 0.79-0.90x at 256 KiB against
  //   1.53-1.57 / 0.97-1.06x, 1.43-1.63 / 0.75-0.79x at 512 KiB against 1.37-1.58 / 0.93-1.00x.
  //   On the AMD EPYC VM of 2026-11-30 the launches fell in two states, told apart by Open MPI's
  //   best at 1 MiB (120-137 us, or 181-261 us: the two cores near or far); in sixteen alternated
  //   launches (`--algo ring,recursive_doubling -b 16K -e 2M -f 4`) recursive doubling took, out
  //   of place, 0.52-0.68x the ring's time at 256 KiB-1 MiB in the far state and 0.90-1.17x in
  //   the near one; in place, with its copy, 0.68-1.11x and 1.12-1.64x. Three launches on both
  //   backends (`--algo auto,recursive_doubling -b 1M -e 8M -f 1 -i 1M`): out of place
  //   1.24-1.52x mpi_best at 1-3 MiB against the ring's 0.88-1.05x, at 4 MiB 1.08-1.16x in two
  //   launches and level in the third, behind from 5 MiB (0.78-0.99x). So out of place it takes
  //   below 4 MiB (its worst case, the near state, 0.91-0.99x mpi_best, above the ring's worst),
  //   and in place, where its worst case is the ring's best, the ring keeps 192 KiB and up.
  //   Out of place the input is the same every call, which a peer reads from clean lines. Not on
  //   inproc, where threads share one memory: there the ring took half its time. At two ranks on
  //   mpi, from 4 KiB to 8 KiB the ring's halves stay under Open MPI's 4 KiB eager limit while recursive doubling's
  //   whole message does not: 2.2 against 3.6 us at 4 KiB;
  // - on ucx at 4 ranks, Rabenseifner's halving-doubling all-reduce (2 log2(P) rounds) beat the
  //   ring (2 (P - 1) rounds of chunks) from 128 KiB to 4 MiB: 1.03-2.74x out of place, 0.75-0.93x
  //   mpi_best against 0.27-0.90x; from 8 MiB the ring was then 2-8% ahead out of place (10-30%
  //   behind in place). At two ranks the ring, which reduces each chunk while the next moves,
  //   was 1.03-1.28x ahead out of place (while Rabenseifner still copied its input first; two
  //   ranks from 4 MiB below). On mpi at 4 ranks (on 2 cores) it was 0.77-0.86x the
  //   ring from 1 MiB on 2026-11-24, but 0.89-0.93x mpi_best against the ring's 0.58-0.68x at
  //   256 KiB and 1.08-1.57x against 0.70-1.15x at 1 MiB in two runs on 2026-11-26: 4 rounds
  //   where the ring has 6, each a chance for an oversubscribed rank to wait for a core. Since it
  //   no longer copies the input first (2026-11-27; out / in place) it leads on mpi at 2-4 MiB
  //   (three runs: 0.81-1.14x / 0.91-1.21x mpi_best against the ring's 0.74-0.80x / 0.58-0.75x
  //   at 2 MiB), is level at 8 MiB (1.01-1.07x / 0.91-1.06x against 1.05-1.08x / 0.87-0.95x),
  //   ahead at 16 MiB in place in four of five runs (0.92-1.29x against 0.86-1.20x) and at
  //   32-64 MiB (two runs: 1.81-2.19x / 2.03-2.50x against 1.76-2.07x / 1.93-2.03x); on ucx ahead
  //   at every size from 4 to 64 MiB in two runs (1.01-2.36x / 1.05-2.34x against 0.91-2.18x /
  //   0.96-1.99x). So it takes every size from 128 KiB at 4 ranks or more on both. Recursive
  //   halving's reduce-scatter likewise beat the ring at 4 ranks from 128 KiB to 1 MiB in both
  //   runs (0.77-1.73x mpi_best against 0.63-1.29x), and, without its copies of the input and of
  //   the result (2026-11-27, three runs), at 2-8 MiB too: 1.15-1.45x / 1.14-1.79x against
  //   0.70-1.02x / 0.69-1.10x at 2 MiB, 1.45-1.90x against 1.36-1.40x at 8 MiB out of place;
  //   level at 16 MiB (the pairwise rows below have since taken 3-9 ranks). The shm row comes
  //   first from 512 KiB; where a buffer is not shared it hands the call to the next row;
  // - all-reduce and reduce-scatter at two ranks of one host on mpi and ucx from 4 to 64 MiB: Rabenseifner and
  //   recursive halving, which there are one exchange of halves and their reduction (then, for
  //   the all-reduce, one exchange of the sums). The ring makes the same moves in 1 MiB chunks
  //   (two or more from 4 MiB) so that one chunk's transfer overlaps the next one's reduction,
  //   but on one host a rank's own core makes both (its single copies read the peer's memory)
  //   and the two ranks do the same work at the same time: the chunks add messages and waits and
  //   overlap nothing (between hosts, where a network moves the chunks, the ring stays). On the
  //   Intel Xeon VM on 2026-11-29, the ring's time over the other's in the same launch, out / in
  //   place: all-reduce (three launches of `all_reduce_perf --backend
  //   mpi,ucx --algo ring,rabenseifner -b 2M -e 32M -f 2`) 1.03-1.13 / 1.00-1.08 at 4-16 MiB on
  //   mpi and 1.00-1.14 / 0.96-1.07 on ucx, level at 2 MiB (one chunk) and at 32 MiB
  //   (0.96-1.10); reduce-scatter (three launches per backend of `reduce_scatter_perf --algo
  //   ring,recursive_halving -b 4M -e 32M -f 2`) 1.05-1.09 / 1.02-1.07 at 8-16 MiB on mpi and
  //   1.07-1.17 / 1.08-1.18 on ucx, 0.99-1.08 at 4 and 32 MiB. At 64 MiB, where the ring's
  //   chunks are 4 MiB, it stays: the all-reduce was level there, and on ucx the reduce-scatter
  //   took 1.01-1.06x the ring's time with the row in three alternated launches of
  //   `reduce_scatter_perf --backend mpi,ucx -b 1M -e 64M -f 4`, which gave auto at 4-16 MiB
  //   0.88-1.03x its time before (at 16 MiB in place 0.91-0.95x on both backends). With the
  //   all-reduce's row, auto ran 1.27-1.37 / 0.95-1.04x mpi_best at 16 MiB on mpi
  //   against 1.08-1.26 / 0.89-0.94x before, and 1.26-1.36 / 1.04-1.07x on ucx against
  //   1.14-1.20 / 0.88-1.14x (three alternated launches each of `all_reduce_perf --backend
  //   mpi,ucx -b 1M -e 64M -f 4`; level at 1 and 64 MiB);
  // - all-gather from 3 to 9 ranks on mpi and ucx, past the rows above: pairwise, every block
  //   sent straight to every peer at once (one window), where the ring passes blocks on in
  //   P - 1 dependent steps and recursive doubling in log2(P). Side by side on 2026-11-27
  //   (`all_gather_perf --algo ring,pairwise,...`, mpi_best / time, out / in place): on mpi at
  //   4 ranks, four runs, 0.97-1.69x / 0.86-1.11x from 256 KiB to 4 MiB against the ring's
  //   0.75-1.04x / 0.44-0.94x (recursive doubling 0.68-0.96x / 0.59-0.96x), 0.99-1.13x /
  //   0.98-1.11x at 16-64 MiB against 0.92-1.07x / 0.92-1.10x; at 3 ranks, two runs, 0.96-1.96x
  //   / 0.97-1.14x at 256 KiB-1 MiB against 0.96-1.36x / 0.75-1.02x, then level (0.81-1.14x /
  //   0.79-1.02x against 0.83-1.12x / 0.81-1.05x); on ucx at 4 ranks ahead of the ring at most
  //   sizes from 4 KiB (1.38x / 0.85x against 0.74x / 0.41x at 1 MiB), behind recursive doubling
  //   by 7-15% below 4 MiB, which keeps its row below 512 KiB;
  // - reduce-scatter from 3 to 9 ranks on mpi and ucx, past the rows above (shm hands plain
  //   buffers over to it): pairwise, each block sent straight to its rank, the arrivals summed in
  //   rank order once all are in. On 2026-11-27, with the scratch pool keeping its largest blocks
  //   (`reduce_scatter_perf --backend mpi,ucx --algo ring,recursive_halving,pairwise`, mpi_best /
  //   time, out / in place): at 4 ranks on mpi 1.24-3.96x from 256 KiB to 64 MiB against
  //   recursive halving's 1.12-3.65x and the ring's 0.64-3.19x; on ucx 0.97-4.65x against
  //   0.96-4.23x and 0.60-3.48x (recursive halving level with it up to 256 KiB); at 3 ranks on mpi
  //   1.30-3.80x from 64 KiB to 16 MiB against the ring's 1.09-3.79x, ahead at every point but
  //   1 MiB out of place (1.55x against 1.63x), and level at 64 MiB in the run before the pool's
  //   change (2.09-2.11x against 1.92-2.09x). Recursive halving keeps its rows for more ranks;
  // - all-reduce from 4 to 9 ranks on mpi and ucx, from 128 KiB: pairwise, that reduce-scatter
  //   and then the pairwise all-gather of the summed parts, two rounds where Rabenseifner takes
  //   2 log2(P). Three runs at 4 ranks on mpi from 128 KiB to 64 MiB (`all_reduce_perf --algo
  //   rabenseifner,pairwise`, 19 sizes in all): ahead of Rabenseifner at 15 of them out of place
  //   and 12 in place, by up to 1.4x (1.45x against 1.06x mpi_best at 2 MiB out of place), never
  //   more than 11% behind; on ucx ahead at 7 and 8 of 10. At 3 ranks it was level with the
  //   ring (two runs, 0.89-2.66x against 0.80-2.51x, either ahead by turns), which keeps 3;
  // - all-reduce from 512 KiB on mpi and ucx: shm, every rank reducing its share of every rank's
  //   shared input into its output, then copying the other shares from their owners' outputs.
  //   On allocate_shared buffers on 2026-11-28 (`all_reduce_perf --buffers both --algo auto,shm`,
  //   mpi_best / time, out / in place): at 2 ranks 2.68-2.91x / 1.55-1.72x from 512 KiB to
  //   2 MiB against 1.47-1.67x / 1.05-1.13x for the ring, at 4 ranks 3.15-3.34x / 2.78-4.46x
  //   at 1-4 MiB against 0.94-1.31x / 0.96-1.01x for pairwise. It leads there from 128 KiB
  //   (1.5-2.3x), but on plain buffers it hands over after the descriptor exchange (1-2 us), so
  //   its row starts where the other shm rows do; on plain buffers it ran level with the rows it
  //   hands over to (0.93-1.63x against 0.91-1.63x at 512 KiB-4 MiB on 2 and 4 ranks);
  // - all-reduce past the slots' 64 KiB and below the shm row's 512 KiB, at 2 to 8 ranks: eager,
  //   in pieces of a slot (eager_mailbox.hpp), every rank reducing each piece whole from every
  //   slot: no rank waits on a peer's partial sum. On the AMD EPYC VM on 2026-11-30
  //   (`all_reduce_perf --algo eager,ring,pairwise,recursive_doubling,native -b 128K`, mpi_best /
  //   time, out / in place, user buffers, one launch each) at 128-256 KiB: at 3 ranks on mpi
  //   1.32-1.66 / 1.50-1.84x where the ring, the row before, ran 0.47-0.54 / 0.52-0.68x and
  //   Open MPI's own 0.94-1.05x; at 4 ranks 1.92-2.53 / 1.53-1.87x against pairwise's 1.04-1.09 /
  //   0.81-0.87x; at 2 ranks 1.39-1.46 / 1.14-1.29x against recursive doubling's 1.30-1.59x out of
  //   place and 1.00-1.02x in place (the ring's from 192 KiB); at 5, 6 and 8 ranks 2.14-3.49 /
  //   1.62-2.02x against pairwise's 0.97-1.36 / 0.68-1.01x; on ucx 1.71-2.54 / 1.68-2.46x at 3
  //   and 4 ranks against 0.44-1.29 / 0.50-1.35x for the others, and at 2 ranks 1.33-1.53 /
  //   1.64-2.10x against recursive doubling's 1.18-1.92 / 1.16-1.36x; on inproc's two threads
  //   17-37 us against 30-49 for the ring and recursive doubling. At two ranks of one host on mpi
  //   and ucx recursive doubling keeps the calls out of place, each rank reading the other's input
  //   in one copy: three launches (`--backend mpi|ucx --algo eager,recursive_doubling -b 72K -e
  //   500K -f 1.4142 --repeat 7`, two on mpi) put it at 1.38-2.01x there against eager's
  //   1.39-1.86x, ahead at 16 of 18 points by up to 18%, while in place eager ran 1.62-2.24x against
  //   its 1.08-1.42x. Past the range it ran on: 1.23-1.57 / 1.04-1.45x at 512 KiB-2 MiB on
  //   plain buffers at 2-4 ranks, where the rows below ran 0.86-1.13 / 0.87-1.04x, 0.81-1.89 /
  //   0.82-1.46x at 4 MiB (two launches), and behind at 16 MiB at 3 and 4 ranks (0.97-1.14x
  //   against the ring's 1.10-1.19x); but on allocate_shared buffers the shm all-reduce, whose
  //   ranks each reduce a share, ran 1.40-2.69x its speed out of place and 0.71-2.03x in place at
  //   512 KiB-4 MiB at 2-4 ranks (one launch each, `--buffers shared --algo eager,shm`; eager
  //   ahead only at 2 ranks in place at 2 MiB), so shm keeps 512 KiB and up, and hands eager the
  //   calls on plain buffers (next);
  // - all-reduce on plain buffers from 512 KiB at 2 and 3 ranks on mpi and ucx: eager in pieces,
  //   which the shm row reserves on the slots behind its exchange of descriptors as the call
  //   starts, and which runs where some rank's buffer is not shared (Algorithm::
  //   start_in_slots_if), unless rank 0 measured its runner-up, the next row that takes over on
  //   tags (Rabenseifner at two ranks of one host from 4 to 64 MiB, else the ring), faster for
  //   calls of that size and placement: it then hands every rank's call to that instead
  //   (shm_single_copy.cpp). Which is faster is the machine's. Three launches on the AMD EPYC VM
  //   on 2026-11-30 (`all_reduce_perf --algo auto,<the rows it replaced> -b 512K -e 32M -f 2`,
  //   mpi_best / time, out / in place) to 16 MiB: at 3 ranks auto ran 1.05-1.56 / 1.09-1.83x
  //   where the ring ran 0.76-1.44 / 0.91-1.59x and pairwise 0.81-1.17 / 0.84-1.29x; at 2 ranks
  //   in place 1.05-1.97x against the ring's and Rabenseifner's 0.74-1.23x, and out of place from
  //   4 MiB 1.07-2.03x against 0.71-1.44x (below 4 MiB recursive doubling, then a row of its own,
  //   ran 1.17-2.33x against eager's 1.27-2.17x). On the Intel Xeon VM on 2026-12-01 (`--algo
  //   auto,eager,rabenseifner,ring -b 512K -e 64M -f 2`, two ranks, four launches) the ring or
  //   Rabenseifner led out of place at 512 KiB-1 MiB (1.38-1.51x against eager's 1.13-1.37x) and
  //   in place at 2-8 MiB (0.97-1.08x against 0.91-1.06x), eager in place at 512 KiB-1 MiB
  //   (1.13-1.30x against 0.91-0.99x) and both ways at 32-64 MiB (1.87-2.57x against
  //   1.58-2.28x), where on the AMD VM Rabenseifner had led in place at 16 MiB (1.01x against
  //   0.90-0.92x). Recursive doubling ran 0.98-1.21x out of place at 512 KiB-4 MiB there, behind
  //   both. With the measured choice (`-n 100`, one launch) auto ran 1.28-1.39 / 0.95-1.11x at
  //   512 KiB-8 MiB against 1.38-1.47 / 0.98-1.17x for the best of the three, its trials and
  //   each way's first call after the other's (1.3-1.7x its next ones) costing the rest; once
  //   the early rechecks of a way measured far slower kept to 5% of the time, auto at 2 ranks on
  //   the AMD VM ran 0.86-1.01x the faster way at 512 KiB-8 MiB, 0.81-0.97x before. At 4
  //   ranks the launches on the AMD VM put eager ahead of pairwise and Rabenseifner at 28 of 36
  //   points (0.62-1.36 / 0.86-1.57x against pairwise's 0.62-1.22 / 0.54-1.38x), but both table
  //   runs had it at 0.79-1.02 / 0.70-1.16x at 1-16 MiB, below 0.95 in 5 of 6 rows, where
  //   pairwise had run 1.06-1.28 / 1.00-1.02x, and launches with the tables' settings were split:
  //   four ranks share the VM's two cores, and each of the 16-256 pieces waits for every rank to
  //   be scheduled. So four ranks keep pairwise; at 5 and 8 ranks eager, every rank reducing
  //   every piece whole, was behind pairwise at 6 of 8 points at 2-8 MiB (0.78-1.19 /
  //   0.68-1.20x against 0.88-1.09 / 0.88-1.06x; one launch each);
  // - all-to-all from 512 KiB on mpi and ucx: shm, out of place every rank copying its block of
  //   each peer's shared input straight into its output: 1.14-2.20x mpi_best at 1-64 MiB on 2-4
  //   ranks on 2026-11-27 where pairwise ran 0.64-1.06x. In place every rank first copies its
  //   blocks of the peers' buffers aside, then into its own: on 2026-11-28 (`alltoall_perf
  //   --buffers shared --algo auto,pairwise`, in place, mpi_best / time) 1.05-6.89x at 1-64 MiB
  //   on 2 ranks (three runs) against pairwise's 0.99-4.16x, ahead at every point, and 1.02-2.88x
  //   on 4 ranks (two runs) against 0.93-1.22x. On plain buffers it hands the call to pairwise
  //   (paired with pairwise on plain buffers at 2 ranks, 24 points from 1 to 64 MiB: median 0.99x
  //   out of place, the cost of the descriptor exchange);
  // - all-to-all and all-to-allv are otherwise pairwise on every backend. Against Open MPI's own
  //   (MPI_Ialltoall), two runs each, mpi_best / time, out of place: at 2 ranks 0.83-1.16x
  //   against 0.80-0.99x from 128 KiB to 32 MiB, pairwise ahead or level at every size; at 4
  //   ranks 0.91-1.09x against 0.89-1.09x, and in place 0.92-1.00x against 0.59-0.60x at 4 MiB,
  //   0.86-1.03x against 0.77-0.87x at 16-64 MiB. All-to-allv's native first exchanges every
  //   pair's counts (0.48 us pairwise against 1.10 us native at 8 B per peer, 6.6 against
  //   7.2-7.5 us at 64 KiB): where eager hands an all-to-allv over, pairwise takes it;
  // - broadcast: `eager` below 512 KiB, past the slots' 64 KiB in pieces of 64 KiB, the root
  //   storing one into its slot while the readers copy the one before (eager_mailbox.hpp), and
  //   nothing of a payload its slot already holds: data at rest ran 1.51-3.51x mpi_best in place
  //   at 16-256 KiB at two ranks on the Intel VM on 2026-11-30, where the stores had run
  //   0.61-0.96x (perftests/HISTORY.md, "Broadcasts of data at rest"). On
  //   2026-11-29 (`broadcast_perf --algo eager,binomial,native -b 128K -e 512K -f 2`, mpi_best /
  //   time, out / in place; out of place the root copies its input into the buffer first, so the
  //   readers of a single copy read lines the root has just written, and the root then writes
  //   lines they hold): at 2 ranks on mpi (three launches) 2.37-2.89 / 1.02-1.20x at 128-256 KiB
  //   where the tree ran 0.93-0.99 / 0.95-0.97x and native 0.95-0.98 / 0.92-0.98x; on ucx (two)
  //   2.58-2.85 / 1.04-1.18x against the tree's 0.95-1.24 / 0.89-1.03x; at 3 and 4 ranks, which
  //   share the VM's 2 cores (two launches each), 2.00-3.05 / 1.23-2.30x against 0.67-1.00 /
  //   0.70-1.04x; at 512 KiB, where the shm row starts, 0.96-1.16x in place. Forced on inproc's
  //   threads it was 2x the tree up to 256 KiB, level at 512 KiB and 0.8x at 1 MiB. Without the
  //   eager path (ranks on several hosts, more than 16): the tree's plain sends beat
  //   MPI_Ibcast (1.04-1.7x) up to 8 KiB, from 3 ranks on mpi native takes it from there. At two
  //   ranks the tree is one send, which was ahead of MPI_Ibcast or level above the eager slots on
  //   2026-11-27: over mpi_best, 0.92-1.00x against 0.89-0.94x at 128 KiB (four launches, out and
  //   in place), 0.94-1.06x against 0.91-1.04x at 256 KiB-64 MiB; at four ranks it was ahead out
  //   of place and behind in place by turns (0.79-1.21x against 0.85-1.08x), so native stays
  //   there below 512 KiB. From 512 KiB the shm broadcast comes first on mpi and ucx: on allocate_shared
  //   buffers every rank copies the root's buffer at once: 1.19-1.79x / 1.89-3.20x mpi_best out /
  //   in place from 1 to 64 MiB at 2-4 ranks on 2026-11-27 (0.84-1.06x out of place at 4 MiB, 4
  //   ranks, mpi), where the tree and native ran 0.59-1.23x. On plain buffers it hands the call to
  //   the tree (never native): at 3 ranks on mpi level with native (paired median 0.99x / 1.02x,
  //   1-64 MiB, three launches), at 4 ranks ahead out of place and behind in place (1.15x /
  //   0.96x); at 2 ranks the tree was the row already. At 2 ranks on mpi and ucx eager goes on
  //   at every size, before the shm row: once its waits stopped backing off while pieces moved
  //   and a root's shared buffer came to be read whole (eager_mailbox.cpp), on the Intel VM on
  //   2026-11-29 (`broadcast_perf --algo eager,binomial -b 512K -e 64M -f 2`, two launches per
  //   backend, user buffers) it ran 1.43-1.53 / 1.07-1.17x at 1 MiB against the tree's 0.96-1.07
  //   / 0.82-1.03x, 1.01-1.16 / 1.07-1.29x at 2-16 MiB against 0.96-1.02 / 0.96-1.05x, and
  //   1.16-1.23 / 1.16-1.57x at 32-64 MiB against 0.96-1.17 / 0.94-1.42x; at 512 KiB 1.66-1.84 /
  //   0.57-0.70x against 0.97-1.06 / 0.78-0.99x, the slots' trade-off of the smaller sizes. On
  //   allocate_shared buffers, which it takes from shm there, it ran 0.94-1.09x shm's speed at
  //   4-64 MiB (three alternated launches per backend, `--buffers shared --algo eager,shm`), the
  //   readers copying the whole call at its first piece and the later pieces not published.
  //   From 4 to 8 ranks on one host it goes on past 512 KiB too: on the AMD EPYC VM on 2026-11-30
  //   (its 2 cores shared, `broadcast_perf --algo auto,eager -b 512K -e 64M`, mpi_best / time,
  //   out / in place, user buffers) it ran 1.04-2.07 / 1.17-1.79x at 1-64 MiB at 4 ranks on mpi
  //   (two launches) where auto, the tree that shm hands plain buffers to, ran 0.59-1.19 /
  //   0.66-1.10x, and 1.08-2.37 / 0.94-1.77x on ucx against 0.87-1.17 / 0.74-1.01x; at 5, 6 and 8
  //   ranks (one launch each) 1.32-1.79 / 1.05-1.68x at 2-32 MiB against 0.67-1.13 / 0.74-1.21x.
  //   On allocate_shared buffers its root lends them from 512 KiB there (eager_mailbox.cpp),
  //   level with shm. At 3 ranks it was ahead out of place at 1-64 MiB (1.18-2.76x against
  //   0.89-1.19x) but behind at rest in place at 2-4 MiB (0.76-0.86x against 0.92-1.03x; three
  //   launches), so the tree keeps 3 ranks. Rank 0's measured choice between the two (the
  //   all-reduce's, timed on rank 0), tried at 3-8 ranks on 2026-12-02, gained out of place at 1-4
  //   MiB and lost in place at 1 MiB and at 64 MiB: the root's own time does not rank them as the
  //   readers' does (perftests/HISTORY.md, "The broadcast from 512 KiB at three and four ranks").
  // - on nccl, NCCL's own collectives run on the stream with no host round trip: always native
  //   where it can run the call.
  // - on ucx (no native collectives), the shm path reads allocate_shared memory that UCX mapped
  //   (through its remote keys) and wins there as on mpi; everything else is meshcomm's own.
  const auto mpi = BackendKind::mpi;
  const auto ucx = BackendKind::ucx;
  const auto nccl = BackendKind::nccl;
  table.rules_ = {
      {.kind = CollectiveKind::all_gather, .backend = nccl, .algorithm = "native"},
      {.kind = CollectiveKind::reduce_scatter, .backend = nccl, .algorithm = "native"},
      {.kind = CollectiveKind::all_reduce, .backend = nccl, .algorithm = "native"},
      {.kind = CollectiveKind::all_to_all, .backend = nccl, .algorithm = "native"},
      {.kind = CollectiveKind::all_to_allv, .backend = nccl, .algorithm = "native"},
      {.kind = CollectiveKind::broadcast, .backend = nccl, .algorithm = "native"},
      {.kind = CollectiveKind::all_gather, .max_bytes = 512 * KiB, .algorithm = "eager"},
      {.kind = CollectiveKind::reduce_scatter, .algorithm = "eager"},
      {.kind = CollectiveKind::all_reduce, .backend = mpi, .min_bytes = kPastOneSlot, .max_bytes = 512 * KiB,
       .max_ranks = 2, .one_host = true, .out_of_place = true, .algorithm = "recursive_doubling"},
      {.kind = CollectiveKind::all_reduce, .backend = ucx, .min_bytes = kPastOneSlot, .max_bytes = 512 * KiB,
       .max_ranks = 2, .one_host = true, .out_of_place = true, .algorithm = "recursive_doubling"},
      {.kind = CollectiveKind::all_reduce, .max_bytes = 512 * KiB, .max_ranks = 8, .algorithm = "eager"},
      {.kind = CollectiveKind::all_reduce, .max_bytes = kPastOneSlot, .algorithm = "eager"},
      {.kind = CollectiveKind::all_to_all, .max_bytes = 512 * KiB, .algorithm = "eager"},
      {.kind = CollectiveKind::broadcast, .max_bytes = 512 * KiB, .algorithm = "eager"},
      {.kind = CollectiveKind::all_to_allv, .algorithm = "eager"},
      {.kind = CollectiveKind::all_gather, .backend = mpi, .min_bytes = 512 * KiB, .max_ranks = 2,
       .algorithm = "eager"},
      {.kind = CollectiveKind::all_gather, .backend = ucx, .min_bytes = 512 * KiB, .max_ranks = 2,
       .algorithm = "eager"},
      {.kind = CollectiveKind::broadcast, .backend = mpi, .min_bytes = 512 * KiB, .max_ranks = 2, .algorithm = "eager"},
      {.kind = CollectiveKind::broadcast, .backend = ucx, .min_bytes = 512 * KiB, .max_ranks = 2, .algorithm = "eager"},
      {.kind = CollectiveKind::broadcast, .backend = mpi, .min_bytes = 512 * KiB, .min_ranks = 4, .max_ranks = 8,
       .algorithm = "eager"},
      {.kind = CollectiveKind::broadcast, .backend = ucx, .min_bytes = 512 * KiB, .min_ranks = 4, .max_ranks = 8,
       .algorithm = "eager"},
      {.kind = CollectiveKind::all_to_all, .backend = mpi, .min_bytes = 512 * KiB, .max_bytes = 8 * MiB, .max_ranks = 2,
       .out_of_place = true, .algorithm = "eager"},
      {.kind = CollectiveKind::all_to_all, .backend = ucx, .min_bytes = 512 * KiB, .max_bytes = 8 * MiB, .max_ranks = 2,
       .out_of_place = true, .algorithm = "eager"},
      {.kind = CollectiveKind::all_gather, .backend = mpi, .max_bytes = 4 * KiB, .max_ranks = 2, .algorithm = "native"},
      {.kind = CollectiveKind::all_gather, .max_bytes = 512 * KiB, .algorithm = "recursive_doubling"},
      {.kind = CollectiveKind::all_gather, .backend = mpi, .min_bytes = 512 * KiB, .algorithm = "shm"},
      {.kind = CollectiveKind::all_gather, .backend = ucx, .min_bytes = 512 * KiB, .algorithm = "shm"},
      {.kind = CollectiveKind::all_gather, .backend = mpi, .min_ranks = 3, .max_ranks = 9, .algorithm = "pairwise"},
      {.kind = CollectiveKind::all_gather, .backend = ucx, .min_ranks = 3, .max_ranks = 9, .algorithm = "pairwise"},
      {.kind = CollectiveKind::all_gather, .algorithm = "ring"},
      {.kind = CollectiveKind::reduce_scatter, .max_bytes = 4 * KiB, .algorithm = "recursive_halving"},
      {.kind = CollectiveKind::reduce_scatter, .backend = mpi, .min_bytes = 512 * KiB, .algorithm = "shm"},
      {.kind = CollectiveKind::reduce_scatter, .backend = ucx, .min_bytes = 512 * KiB, .algorithm = "shm"},
      {.kind = CollectiveKind::reduce_scatter, .backend = mpi, .min_bytes = 4 * MiB, .max_bytes = 64 * MiB,
       .max_ranks = 2, .one_host = true, .algorithm = "recursive_halving"},
      {.kind = CollectiveKind::reduce_scatter, .backend = ucx, .min_bytes = 4 * MiB, .max_bytes = 64 * MiB,
       .max_ranks = 2, .one_host = true, .algorithm = "recursive_halving"},
      {.kind = CollectiveKind::reduce_scatter, .backend = mpi, .min_ranks = 3, .max_ranks = 9,
       .algorithm = "pairwise"},
      {.kind = CollectiveKind::reduce_scatter, .backend = ucx, .min_ranks = 3, .max_ranks = 9,
       .algorithm = "pairwise"},
      {.kind = CollectiveKind::reduce_scatter, .backend = mpi, .max_bytes = 16 * MiB, .min_ranks = 4,
       .algorithm = "recursive_halving"},
      {.kind = CollectiveKind::reduce_scatter, .algorithm = "ring"},
      {.kind = CollectiveKind::all_reduce, .backend = mpi, .min_bytes = 4 * KiB, .max_bytes = 8 * KiB, .max_ranks = 2,
       .algorithm = "ring"},
      {.kind = CollectiveKind::all_reduce, .max_bytes = 128 * KiB, .algorithm = "recursive_doubling"},
      {.kind = CollectiveKind::all_reduce, .backend = mpi, .max_bytes = 192 * KiB, .max_ranks = 2,
       .algorithm = "recursive_doubling"},
      {.kind = CollectiveKind::all_reduce, .backend = ucx, .max_bytes = 192 * KiB, .max_ranks = 2,
       .algorithm = "recursive_doubling"},
      {.kind = CollectiveKind::all_reduce, .backend = mpi, .min_bytes = 512 * KiB, .algorithm = "shm"},
      {.kind = CollectiveKind::all_reduce, .backend = ucx, .min_bytes = 512 * KiB, .algorithm = "shm"},
      {.kind = CollectiveKind::all_reduce, .backend = mpi, .min_bytes = 512 * KiB, .max_ranks = 3, .algorithm = "eager"},
      {.kind = CollectiveKind::all_reduce, .backend = ucx, .min_bytes = 512 * KiB, .max_ranks = 3, .algorithm = "eager"},
      {.kind = CollectiveKind::all_reduce, .backend = mpi, .min_bytes = 4 * MiB, .max_bytes = 64 * MiB,
       .max_ranks = 2, .one_host = true, .algorithm = "rabenseifner"},
      {.kind = CollectiveKind::all_reduce, .backend = ucx, .min_bytes = 4 * MiB, .max_bytes = 64 * MiB,
       .max_ranks = 2, .one_host = true, .algorithm = "rabenseifner"},
      {.kind = CollectiveKind::all_reduce, .backend = mpi, .min_ranks = 4, .max_ranks = 9, .algorithm = "pairwise"},
      {.kind = CollectiveKind::all_reduce, .backend = ucx, .min_ranks = 4, .max_ranks = 9, .algorithm = "pairwise"},
      {.kind = CollectiveKind::all_reduce, .backend = ucx, .min_ranks = 4, .algorithm = "rabenseifner"},
      {.kind = CollectiveKind::all_reduce, .backend = mpi, .min_ranks = 4, .algorithm = "rabenseifner"},
      {.kind = CollectiveKind::all_reduce, .algorithm = "ring"},
      {.kind = CollectiveKind::all_to_all, .backend = mpi, .min_bytes = 512 * KiB, .algorithm = "shm"},
      {.kind = CollectiveKind::all_to_all, .backend = ucx, .min_bytes = 512 * KiB, .algorithm = "shm"},
      {.kind = CollectiveKind::all_to_all, .backend = mpi, .min_bytes = 512 * KiB, .max_ranks = 4, .in_place = true,
       .algorithm = "eager"},
      {.kind = CollectiveKind::all_to_all, .backend = ucx, .min_bytes = 512 * KiB, .max_ranks = 4, .in_place = true,
       .algorithm = "eager"},
      {.kind = CollectiveKind::all_to_all, .algorithm = "pairwise"},
      {.kind = CollectiveKind::all_to_allv, .algorithm = "pairwise"},
      {.kind = CollectiveKind::broadcast, .backend = mpi, .min_bytes = 512 * KiB, .algorithm = "shm"},
      {.kind = CollectiveKind::broadcast, .backend = ucx, .min_bytes = 512 * KiB, .algorithm = "shm"},
      {.kind = CollectiveKind::broadcast, .backend = mpi, .max_bytes = 8 * KiB, .algorithm = "binomial"},
      {.kind = CollectiveKind::broadcast, .backend = mpi, .max_ranks = 2, .algorithm = "binomial"},
      {.kind = CollectiveKind::broadcast, .backend = mpi, .algorithm = "native"},
      {.kind = CollectiveKind::broadcast, .algorithm = "binomial"},
  };
  return table;
}

void SelectionTable::force_from_text(std::string_view text, std::string_view source, const AlgorithmList& algorithms) {
  std::vector<std::string_view> kind_names;
  for (auto kind : kAllKinds) kind_names.push_back(to_string(kind));
  std::string_view rest = text;
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    const auto item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    const auto colon = item.find(':');
    auto fail = [&](const std::string& what) {
      return Error(ErrorCode::invalid_argument,
                   fmt::format("{} = '{}': {}; write 'collective:algorithm' pairs separated by commas, e.g. "
                               "'all_gather:ring,reduce_scatter:native'",
                               source, text, what),
                   {.operation = std::string(source)});
    };
    if (colon == std::string_view::npos) throw fail(fmt::format("'{}' has no ':'", item));
    const auto kind_name = item.substr(0, colon);
    const auto algorithm = item.substr(colon + 1);
    const auto kind = std::find_if(kAllKinds.begin(), kAllKinds.end(),
                                   [&](CollectiveKind k) { return to_string(k) == kind_name; });
    if (kind == kAllKinds.end()) {
      throw fail(
          fmt::format("'{}' is not a collective; valid collectives are {}", kind_name, fmt::join(kind_names, ", ")));
    }
    if (algorithms.find(*kind, algorithm) == nullptr) {
      throw fail(fmt::format("'{}' is not an algorithm of {}; valid algorithms are {}", algorithm, kind_name,
                             fmt::join(algorithms.names(*kind), ", ")));
    }
    forced_[static_cast<std::size_t>(*kind)] = std::string(algorithm);
  }
}

std::vector<SelectionRule> SelectionTable::rules_for(CollectiveKind kind, BackendKind backend) const {
  std::vector<SelectionRule> rules;
  for (const auto& rule : rules_) {
    if (rule.kind == kind && (rule.backend == BackendKind::automatic || rule.backend == backend)) rules.push_back(rule);
  }
  return rules;
}

std::optional<std::string_view> SelectionTable::unconditional_first(CollectiveKind kind, BackendKind backend) const {
  for (const auto& rule : rules_) {
    if (rule.kind != kind || (rule.backend != BackendKind::automatic && rule.backend != backend)) continue;
    const bool every_size = rule.min_bytes == 0 && rule.max_bytes == std::numeric_limits<std::size_t>::max();
    const bool every_count = rule.min_ranks <= 1 && rule.max_ranks == std::numeric_limits<int>::max();
    if (every_size && every_count && !rule.one_host && !rule.out_of_place && !rule.in_place) return rule.algorithm;
    return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace meshcomm::detail
