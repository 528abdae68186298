// ns-3 (3.37) LTE reference scenario for celltcp's LTE validation and speed
// benchmark.
//
// Topology:
//
//   server ==10 Gbit/s, 10 ms== PGW -- SGW -- eNB ~~ radio ~~ UE 1..N
//            (point-to-point)    (ns-3 PointToPointEpcHelper defaults for
//                                 S5/S1-U: 10 Gbit/s, 0 ms, GTP-U over UDP/IP)
//
// Radio: one eNB, FDD band 1, DL EARFCN 100 / UL EARFCN 18100, 20 MHz
// (100 PRB) in both directions, SISO (transmission mode 1, ns-3's default),
// eNB 30 dBm and UE 10 dBm (ns-3 defaults), Friis path loss (the LteHelper
// default PathlossModel), no fading (no FadingModel is set), ideal RRC
// (LteHelper::UseIdealRrc default), MIESM PHY error model with HARQ (ns-3
// defaults), PiroEW2010 AMC (default). UEs are placed on a ring of radius
// --distance around the eNB, at equal angles; with Friis and isotropic
// antennas every UE sees the same (very high) SINR.
//
// RLC: --rlc um|am (LteEnbRrc::EpsBearerToRlcMapping). Both RLC modes get a
// transmit buffer of --rlcBuf bytes (default 10 MB) per bearer. ns-3's default
// (LteRlcUm/LteRlcAm::MaxTxBufferSize = 10 KiB) silently drops SDUs beyond
// ten KiB per bearer and throttles a TCP bulk download far below the cell rate,
// so it is raised on purpose here.
//
// Traffic: one BulkSendApplication (unlimited) per UE, server -> UE port
// 5000+i, PacketSink on the UE. TCP as in bench/ns3/dumbbell.cc (Linux-like:
// SACK, timestamps, initial cwnd 10, delayed ACK 2 / 40 ms, min RTO 200 ms)
// except MSS 1400 bytes; send/receive buffers --buf (default 4 MiB).
// --idle attaches the UEs (default EPS bearer, RRC CONNECTED for the whole run,
// ns-3 has no inactivity release) without installing any application.
//
// Measurements (window [--warmup, --duration], default skipping the first
// second):
//   goodput per UE: PacketSink bytes received in the window / window length;
//   pdcp_delay: mean DL PDCP delay (PDCP SDU handed to the eNB PDCP -> PDU
//     received by the UE PDCP, i.e. RLC queueing + MAC/PHY + HARQ), from the
//     UE-side LtePdcp RxPDU trace;
//   rtt: mean of TCP RTT samples at the server (TcpSocketBase "RTT" trace; a
//     TracedValue, so a sample equal to the previous one is not seen);
//   PRBs per TTI: ns-3's MAC traces (DlScheduling/UlScheduling) give MCS and TB
//     size, not the PRB count; the PRB count is recovered by inverting ns-3's
//     own TB size table (LteAmc::GetDl/UlTbSizeFromMcs) and summed per 1 ms TTI.
// Wall time is measured with std::chrono::steady_clock around Simulator::Run()
// only; the process CPU time over the same span (cpu_seconds) is reported too,
// as it is less sensitive to other load on a shared machine. Output: one JSON line on stdout.

#include "ns3/applications-module.h"
#include "ns3/config-store-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/lte-module.h"
#include "ns3/mobility-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"

#include <chrono>
#include <ctime>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

using namespace ns3;

namespace
{

double
CpuSeconds()
{
    timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

std::string
Num(double v)
{
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%.9g", v);
    return buf;
}

bool g_measuring = false;
Ptr<LteAmc> g_amc;

// PRB accounting (sum of PRBs over all allocations inside the window).
uint64_t g_dlPrbSum = 0;
uint64_t g_ulPrbSum = 0;
uint64_t g_dlTbBytes = 0;
uint64_t g_dlAllocs = 0;
uint64_t g_dlPrbUnresolved = 0;
std::map<std::pair<int, int>, int> g_dlPrbCache; // (mcs, bytes) -> nprb
std::map<std::pair<int, int>, int> g_ulPrbCache;

int
PrbsFor(bool dl, int mcs, int bytes)
{
    auto& cache = dl ? g_dlPrbCache : g_ulPrbCache;
    auto key = std::make_pair(mcs, bytes);
    auto it = cache.find(key);
    if (it != cache.end())
    {
        return it->second;
    }
    int found = -1;
    for (int n = 1; n <= 100; ++n)
    {
        int bits = dl ? g_amc->GetDlTbSizeFromMcs(mcs, n) : g_amc->GetUlTbSizeFromMcs(mcs, n);
        if (bits / 8 == bytes)
        {
            found = n;
            break;
        }
    }
    cache[key] = found;
    return found;
}

void
DlScheduling(DlSchedulingCallbackInfo info)
{
    if (!g_measuring)
    {
        return;
    }
    ++g_dlAllocs;
    g_dlTbBytes += info.sizeTb1 + info.sizeTb2;
    int n = PrbsFor(true, info.mcsTb1, info.sizeTb1);
    if (n < 0)
    {
        ++g_dlPrbUnresolved;
        return;
    }
    g_dlPrbSum += n;
}

void
UlScheduling(uint32_t, uint32_t, uint16_t, uint8_t mcs, uint16_t size, uint8_t)
{
    if (!g_measuring)
    {
        return;
    }
    int n = PrbsFor(false, mcs, size);
    if (n > 0)
    {
        g_ulPrbSum += n;
    }
}

// DL PDCP delay at the UE.
double g_pdcpDelaySum = 0; // seconds
uint64_t g_pdcpDelayN = 0;

void
UePdcpRx(std::string, uint16_t, uint8_t, uint32_t, uint64_t delayNs)
{
    if (!g_measuring)
    {
        return;
    }
    g_pdcpDelaySum += delayNs * 1e-9;
    ++g_pdcpDelayN;
}

// TCP RTT samples at the server.
double g_rttSum = 0;
uint64_t g_rttN = 0;

void
ServerRtt(std::string, Time, Time sample)
{
    if (!g_measuring || sample.IsZero())
    {
        return;
    }
    g_rttSum += sample.GetSeconds();
    ++g_rttN;
}

std::vector<Ptr<PacketSink>> g_sinks;
std::vector<uint64_t> g_rxAtStart;

void
StartMeasuring(uint32_t serverNodeId)
{
    for (size_t i = 0; i < g_sinks.size(); ++i)
    {
        g_rxAtStart[i] = g_sinks[i]->GetTotalRx();
    }
    g_measuring = true;
    // Bearers and server sockets exist by now (attach takes a few ms with ideal RRC);
    // FailSafe: with --idle there are no sockets.
    Config::ConnectFailSafe("/NodeList/*/DeviceList/*/$ns3::LteUeNetDevice/LteUeRrc/"
                    "DataRadioBearerMap/*/LtePdcp/RxPDU",
                    MakeCallback(&UePdcpRx));
    std::ostringstream p;
    p << "/NodeList/" << serverNodeId << "/$ns3::TcpL4Protocol/SocketList/*/RTT";
    Config::ConnectFailSafe(p.str(), MakeCallback(&ServerRtt));
}

} // namespace

int
main(int argc, char* argv[])
{
    uint32_t ues = 1;
    double duration = 10.0;
    double warmup = 1.0;
    std::string rlc = "um";
    std::string scheduler = "pf";
    double distance = 100.0;
    std::string cc = "newreno";
    bool idle = false;
    uint32_t segmentSize = 1400;
    uint32_t bufBytes = 4 * 1024 * 1024;
    uint32_t rlcBuf = 10 * 1000 * 1000;
    uint32_t sendSize = 131072;
    uint32_t seed = 1;

    auto setupStart = std::chrono::steady_clock::now();

    CommandLine cmd(__FILE__);
    cmd.AddValue("ues", "number of UEs", ues);
    cmd.AddValue("duration", "simulated seconds", duration);
    cmd.AddValue("warmup", "seconds skipped before the measurement window", warmup);
    cmd.AddValue("rlc", "RLC mode for the data bearers: um | am", rlc);
    cmd.AddValue("scheduler", "MAC scheduler: pf | rr", scheduler);
    cmd.AddValue("distance", "UE distance from the eNB in metres (ring)", distance);
    cmd.AddValue("cc", "congestion control: newreno | cubic", cc);
    cmd.AddValue("idle", "attach the UEs without any traffic", idle);
    cmd.AddValue("segmentSize", "TCP MSS in bytes", segmentSize);
    cmd.AddValue("buf", "TCP send/receive buffer bytes", bufBytes);
    cmd.AddValue("rlcBuf", "RLC transmit buffer per bearer, bytes", rlcBuf);
    cmd.AddValue("seed", "ns-3 RNG run number", seed);
    cmd.Parse(argc, argv);

    if (ues == 0 || ues > 320 || duration <= warmup || warmup < 0)
    {
        std::cerr << "lte: --ues must be in 1..320 and --duration > --warmup >= 0\n";
        return 2;
    }
    std::string ccType;
    if (cc == "newreno")
    {
        ccType = "ns3::TcpNewReno";
    }
    else if (cc == "cubic")
    {
        ccType = "ns3::TcpCubic";
    }
    else
    {
        std::cerr << "lte: unknown --cc=" << cc << " (newreno|cubic)\n";
        return 2;
    }
    std::string schedType;
    if (scheduler == "pf")
    {
        schedType = "ns3::PfFfMacScheduler";
    }
    else if (scheduler == "rr")
    {
        schedType = "ns3::RrFfMacScheduler";
    }
    else
    {
        std::cerr << "lte: unknown --scheduler=" << scheduler << " (pf|rr)\n";
        return 2;
    }
    if (rlc != "um" && rlc != "am")
    {
        std::cerr << "lte: unknown --rlc=" << rlc << " (um|am)\n";
        return 2;
    }

    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(seed);

    // TCP (as bench/ns3/dumbbell.cc, MSS 1400).
    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TypeId::LookupByName(ccType)));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(segmentSize));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(bufBytes));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(bufBytes));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(2));
    Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(MilliSeconds(40)));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MilliSeconds(200)));
    Config::SetDefault("ns3::TcpSocket::ConnTimeout", TimeValue(Seconds(1)));
    Config::SetDefault("ns3::TcpSocket::ConnCount", UintegerValue(6));
    Config::SetDefault("ns3::TcpSocket::DataRetries", UintegerValue(15));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::WindowScaling", BooleanValue(true));

    // RLC: mode and (large) transmit buffers.
    Config::SetDefault("ns3::LteEnbRrc::EpsBearerToRlcMapping",
                       EnumValue(rlc == "um" ? LteEnbRrc::RLC_UM_ALWAYS : LteEnbRrc::RLC_AM_ALWAYS));
    Config::SetDefault("ns3::LteRlcUm::MaxTxBufferSize", UintegerValue(rlcBuf));
    Config::SetDefault("ns3::LteRlcAm::MaxTxBufferSize", UintegerValue(rlcBuf));

    // SRS periodicity: ns-3's default (40 ms) unless the cell has 40 UEs or
    // more; each UE needs its own SRS configuration index, so the periodicity
    // must exceed the number of UEs.
    uint32_t srs = 320;
    for (uint32_t p : {40u, 80u, 160u, 320u})
    {
        if (p > ues)
        {
            srs = p;
            break;
        }
    }
    Config::SetDefault("ns3::LteEnbRrc::SrsPeriodicity", UintegerValue(srs));

    Ptr<LteHelper> lte = CreateObject<LteHelper>();
    Ptr<PointToPointEpcHelper> epc = CreateObject<PointToPointEpcHelper>();
    lte->SetEpcHelper(epc);
    lte->SetSchedulerType(schedType);
    lte->SetEnbDeviceAttribute("DlEarfcn", UintegerValue(100));
    lte->SetEnbDeviceAttribute("UlEarfcn", UintegerValue(18100));
    lte->SetEnbDeviceAttribute("DlBandwidth", UintegerValue(100));
    lte->SetEnbDeviceAttribute("UlBandwidth", UintegerValue(100));

    Ptr<Node> pgw = epc->GetPgwNode();

    NodeContainer serverC;
    serverC.Create(1);
    Ptr<Node> server = serverC.Get(0);
    InternetStackHelper internet;
    internet.Install(serverC);

    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", StringValue("10Gbps"));
    p2p.SetDeviceAttribute("Mtu", UintegerValue(1500));
    p2p.SetChannelAttribute("Delay", StringValue("10ms"));
    NetDeviceContainer inetDevs = p2p.Install(pgw, server);
    Ipv4AddressHelper addr;
    addr.SetBase("1.0.0.0", "255.0.0.0");
    Ipv4InterfaceContainer inetIf = addr.Assign(inetDevs);
    Ipv4Address serverAddr = inetIf.GetAddress(1);

    Ipv4StaticRoutingHelper srh;
    Ptr<Ipv4StaticRouting> serverRoutes =
        srh.GetStaticRouting(server->GetObject<Ipv4>());
    serverRoutes->AddNetworkRouteTo(Ipv4Address("7.0.0.0"), Ipv4Mask("255.0.0.0"), 1);

    NodeContainer enbC;
    enbC.Create(1);
    NodeContainer ueC;
    ueC.Create(ues);

    MobilityHelper mob;
    Ptr<ListPositionAllocator> pos = CreateObject<ListPositionAllocator>();
    pos->Add(Vector(0, 0, 0));
    mob.SetMobilityModel("ns3::ConstantPositionMobilityModel");
    mob.SetPositionAllocator(pos);
    mob.Install(enbC);
    Ptr<ListPositionAllocator> uePos = CreateObject<ListPositionAllocator>();
    for (uint32_t i = 0; i < ues; ++i)
    {
        double a = 2 * M_PI * i / ues;
        uePos->Add(Vector(distance * std::cos(a), distance * std::sin(a), 0));
    }
    mob.SetPositionAllocator(uePos);
    mob.Install(ueC);

    NetDeviceContainer enbDevs = lte->InstallEnbDevice(enbC);
    NetDeviceContainer ueDevs = lte->InstallUeDevice(ueC);

    internet.Install(ueC);
    Ipv4InterfaceContainer ueIf = epc->AssignUeIpv4Address(ueDevs);
    for (uint32_t i = 0; i < ues; ++i)
    {
        Ptr<Ipv4StaticRouting> r = srh.GetStaticRouting(ueC.Get(i)->GetObject<Ipv4>());
        r->SetDefaultRoute(epc->GetUeDefaultGatewayAddress(), 1);
    }
    lte->Attach(ueDevs, enbDevs.Get(0));

    if (!idle)
    {
        for (uint32_t i = 0; i < ues; ++i)
        {
            uint16_t port = 5000 + i;
            PacketSinkHelper sinkHelper("ns3::TcpSocketFactory",
                                        InetSocketAddress(Ipv4Address::GetAny(), port));
            ApplicationContainer sa = sinkHelper.Install(ueC.Get(i));
            sa.Start(Seconds(0.0));
            g_sinks.push_back(DynamicCast<PacketSink>(sa.Get(0)));

            BulkSendHelper src("ns3::TcpSocketFactory",
                               InetSocketAddress(ueIf.GetAddress(i), port));
            src.SetAttribute("MaxBytes", UintegerValue(0));
            src.SetAttribute("SendSize", UintegerValue(sendSize));
            ApplicationContainer ca = src.Install(server);
            ca.Start(Seconds(0.1));
        }
    }
    g_rxAtStart.assign(g_sinks.size(), 0);

    g_amc = CreateObject<LteAmc>();
    Ptr<LteEnbMac> mac = enbDevs.Get(0)->GetObject<LteEnbNetDevice>()->GetMac();
    mac->TraceConnectWithoutContext("DlScheduling", MakeCallback(&DlScheduling));
    mac->TraceConnectWithoutContext("UlScheduling", MakeCallback(&UlScheduling));

    Simulator::Schedule(Seconds(warmup), &StartMeasuring, server->GetId());
    Simulator::Stop(Seconds(duration));

    auto runStart = std::chrono::steady_clock::now();
    double cpuStart = CpuSeconds();
    Simulator::Run();
    double cpu = CpuSeconds() - cpuStart;
    auto runEnd = std::chrono::steady_clock::now();

    double wall = std::chrono::duration<double>(runEnd - runStart).count();
    double setupWall = std::chrono::duration<double>(runStart - setupStart).count();
    uint64_t events = Simulator::GetEventCount();
    double simSeconds = Simulator::Now().GetSeconds();
    double window = duration - warmup;
    double ttis = window * 1000.0;

    std::vector<double> goodput;
    std::vector<uint64_t> rxTotal;
    double total = 0;
    for (size_t i = 0; i < g_sinks.size(); ++i)
    {
        double g = (g_sinks[i]->GetTotalRx() - g_rxAtStart[i]) * 8.0 / window / 1e6;
        goodput.push_back(g);
        rxTotal.push_back(g_sinks[i]->GetTotalRx());
        total += g;
    }

    Simulator::Destroy();

    std::ostringstream js;
    js << "{\"simulator\":\"ns-3.37\",\"scenario\":\"lte\"";
    js << ",\"ues\":" << ues << ",\"idle\":" << (idle ? "true" : "false");
    js << ",\"duration\":" << Num(duration) << ",\"warmup\":" << Num(warmup);
    js << ",\"rlc\":\"" << rlc << "\",\"scheduler\":\"" << scheduler << "\"";
    js << ",\"cc\":\"" << cc << "\",\"distance_m\":" << Num(distance);
    js << ",\"mss\":" << segmentSize << ",\"tcp_buf_bytes\":" << bufBytes;
    js << ",\"rlc_buf_bytes\":" << rlcBuf << ",\"srs_periodicity_ms\":" << srs;
    js << ",\"sim_seconds\":" << Num(simSeconds);
    js << ",\"wall_seconds\":" << Num(wall);
    js << ",\"setup_wall_seconds\":" << Num(setupWall);
    js << ",\"cpu_seconds\":" << Num(cpu);
    js << ",\"sim_seconds_per_cpu_second\":" << Num(cpu > 0 ? simSeconds / cpu : 0.0);
    js << ",\"sim_seconds_per_wall_second\":" << Num(wall > 0 ? simSeconds / wall : 0.0);
    js << ",\"events\":" << events;
    js << ",\"events_per_wall_second\":" << Num(wall > 0 ? events / wall : 0.0);
    js << ",\"cell_goodput_mbps\":" << Num(total);
    js << ",\"per_ue_goodput_mbps\":[";
    for (size_t i = 0; i < goodput.size(); ++i)
    {
        js << (i ? "," : "") << Num(goodput[i]);
    }
    js << "]";
    // Whole run (bytes received from t = 0 / duration), for simulators that
    // only report whole-run goodput.
    js << ",\"per_ue_rx_bytes_total\":[";
    for (size_t i = 0; i < rxTotal.size(); ++i)
    {
        js << (i ? "," : "") << rxTotal[i];
    }
    js << "]";
    js << ",\"mean_dl_pdcp_delay_ms\":"
       << (g_pdcpDelayN ? Num(g_pdcpDelaySum / g_pdcpDelayN * 1e3) : std::string("null"));
    js << ",\"mean_tcp_rtt_ms\":" << (g_rttN ? Num(g_rttSum / g_rttN * 1e3) : std::string("null"));
    js << ",\"mean_dl_prb_per_tti\":" << Num(g_dlPrbSum / ttis);
    js << ",\"mean_ul_prb_per_tti\":" << Num(g_ulPrbSum / ttis);
    js << ",\"dl_tb_mbps\":" << Num(g_dlTbBytes * 8.0 / window / 1e6);
    js << ",\"dl_allocations\":" << g_dlAllocs << ",\"dl_prb_unresolved\":" << g_dlPrbUnresolved;
    js << "}";
    std::cout << js.str() << std::endl;
    return 0;
}
