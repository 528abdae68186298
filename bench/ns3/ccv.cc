// ns-3 (3.37) counterpart of celltcp's study cc-variants-lte (paper 003, its LTE half:
// Malekzadeh & Abdul Ghani, "A Model for Behavioral Tendency of TCP Congestion Control
// Variants in LTE Cellular and 802.11ac Networks", Tables 1-2).
//
// Topology (as the paper's Table 1-2 and python/celltcp/studies/cc-variants-lte/scenario.toml):
//
//   server ==100 Gbit/s, 10 ms== PGW -- SGW -- eNB ~~ radio ~~ UE 1..14
//
// One eNB, 20 MHz (100 PRB) both ways, FDD band 1 (DL EARFCN 100), ns-3's defaults for the
// rest: SISO, eNB 30 dBm, UE 10 dBm, Friis path loss, no fading, MIESM PHY error model with
// HARQ, PiroEW2010 AMC (64QAM 5/6 at these SINRs, the paper's "modulation 64QAM, coding
// 5/6"), PF scheduler (celltcp's scenario uses PF). UEs uniformly in a disc of --radius
// (500 m) around the eNB, drawn from the run's RNG stream (--seed).
//
// RLC: --rlc um|am for every data bearer; --rlcBuf is the RLC transmit buffer per bearer
// (LteRlcUm/LteRlcAm::MaxTxBufferSize), by default ns-3's own 10240 bytes, the paper's setting.
// SDUs beyond it are dropped (counted: rlc_tx_drops, from the LteRlc TxDrop trace).
//
// TCP: ns-3 3.37's defaults (SndBuf/RcvBuf 128 KiB, initial cwnd 10, delayed ACK 2 / 200 ms,
// min RTO 1 s, no SACK... as ns-3 ships them) except the congestion control (--cc) and
// SegmentSize = --packetSize (1000 or 3000 bytes; 3000-byte segments are fragmented by IP over
// the 1500-byte MTU, as in the paper).
//
// Traffic: one flow per UE, server -> UE (downlink). --rate > 0: an OnOffApplication always
// on (OnTime 1, OffTime 0) at --rate (1 Mbit/s, the paper's "Data Rate 1Mbps") with packets of
// --packetSize; --rate 0: a BulkSendApplication (saturating). Applications start together at
// 0.5 s (after the attach) and stop writing at --duration - 1 s; the last second drains what is
// in flight, so that tx - rx counts lost packets only.
//
// Measurements (the paper's metrics, FlowMonitor on the server and the UEs, downlink flows):
//   goodput_mbps: PacketSink bytes / (duration - 1.5 s), per UE, then the mean over UEs;
//   delay_ms: FlowMonitor delaySum / rxPackets (end-to-end, IP), mean over flows;
//   jitter_ms: FlowMonitor jitterSum / (rxPackets - 1), mean over flows;
//   loss_ratio: sum(txPackets - rxPackets) / sum(txPackets) over the downlink flows (IP packets
//     sent by the server, TCP retransmissions included, that never arrived).
// Output: one JSON line on stdout.
//
// Build: bench/ns3/build.sh ccv; run: validation/ns3_ccv.py (which caches the results in
// validation/ns3_ccv.json with the command that made them).

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/flow-monitor-module.h"
#include "ns3/internet-module.h"
#include "ns3/lte-module.h"
#include "ns3/mobility-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"

#include <cstdio>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

using namespace ns3;

namespace
{

std::string
Num(double v)
{
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%.6g", v);
    return buf;
}

uint64_t g_rlcDrops = 0;

void
RlcTxDrop(std::string, Ptr<const Packet>)
{
    ++g_rlcDrops;
}

void
ConnectRlcDrops()
{
    Config::ConnectFailSafe("/NodeList/*/DeviceList/*/$ns3::LteEnbNetDevice/LteEnbRrc/UeMap/*/"
                            "DataRadioBearerMap/*/LteRlc/TxDrop",
                            MakeCallback(&RlcTxDrop));
}

} // namespace

int
main(int argc, char* argv[])
{
    uint32_t ues = 14;
    double duration = 5.0;
    std::string rlc = "am";
    std::string cc = "newreno";
    uint32_t packetSize = 1000;
    uint64_t rate = 1000000;
    uint32_t rlcBuf = 10240;
    double radius = 500.0;
    uint32_t seed = 1;

    CommandLine cmd(__FILE__);
    cmd.AddValue("ues", "number of UEs", ues);
    cmd.AddValue("duration", "simulated seconds", duration);
    cmd.AddValue("rlc", "RLC mode of the data bearers: um | am", rlc);
    cmd.AddValue("cc", "congestion control (bic hybla newreno highspeed htcp scalable vegas veno "
                       "westwood westwoodplus illinois yeah cubic bbr lp)", cc);
    cmd.AddValue("packetSize", "TCP segment size and application packet size, bytes", packetSize);
    cmd.AddValue("rate", "OnOff rate per flow in bit/s; 0: bulk (BulkSend)", rate);
    cmd.AddValue("rlcBuf", "RLC transmit buffer per bearer, bytes (ns-3 default 10240)", rlcBuf);
    cmd.AddValue("radius", "UEs uniformly in a disc of this radius (m)", radius);
    cmd.AddValue("seed", "ns-3 RNG run number", seed);
    cmd.Parse(argc, argv);

    const std::map<std::string, std::string> types = {
        {"bic", "ns3::TcpBic"},           {"hybla", "ns3::TcpHybla"},
        {"newreno", "ns3::TcpNewReno"},   {"highspeed", "ns3::TcpHighSpeed"},
        {"htcp", "ns3::TcpHtcp"},         {"scalable", "ns3::TcpScalable"},
        {"vegas", "ns3::TcpVegas"},       {"veno", "ns3::TcpVeno"},
        {"westwood", "ns3::TcpWestwood"}, {"westwoodplus", "ns3::TcpWestwood"},
        {"illinois", "ns3::TcpIllinois"}, {"yeah", "ns3::TcpYeah"},
        {"cubic", "ns3::TcpCubic"},       {"bbr", "ns3::TcpBbr"},
        {"lp", "ns3::TcpLp"},
    };
    auto t = types.find(cc);
    if (t == types.end())
    {
        std::cerr << "ccv: --cc=" << cc << " is not one of bic hybla newreno highspeed htcp "
                  << "scalable vegas veno westwood westwoodplus illinois yeah cubic bbr lp\n";
        return 2;
    }
    if (rlc != "um" && rlc != "am")
    {
        std::cerr << "ccv: --rlc=" << rlc << " is not um or am\n";
        return 2;
    }
    if (ues == 0 || ues > 39 || duration <= 2.0 || packetSize == 0)
    {
        std::cerr << "ccv: --ues must be 1..39, --duration > 2, --packetSize > 0\n";
        return 2;
    }
    const double start = 0.5;
    // The applications stop writing 1 s before the end, so that what is in flight arrives and
    // tx - rx counts only packets that were lost.
    const double drain = 1.0;

    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(seed);

    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TypeId::LookupByName(t->second)));
    // ns-3's TcpWestwood is Westwood (per-ACK samples) by default; Westwood+ is the variant
    // Linux's tcp_westwood implements and the paper's "Westwood" in ns-3 is the default one.
    Config::SetDefault("ns3::TcpWestwood::ProtocolType",
                       EnumValue(cc == "westwoodplus" ? TcpWestwood::WESTWOODPLUS
                                                      : TcpWestwood::WESTWOOD));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(packetSize));
    Config::SetDefault("ns3::LteEnbRrc::EpsBearerToRlcMapping",
                       EnumValue(rlc == "um" ? LteEnbRrc::RLC_UM_ALWAYS : LteEnbRrc::RLC_AM_ALWAYS));
    Config::SetDefault("ns3::LteRlcUm::MaxTxBufferSize", UintegerValue(rlcBuf));
    Config::SetDefault("ns3::LteRlcAm::MaxTxBufferSize", UintegerValue(rlcBuf));

    Ptr<LteHelper> lte = CreateObject<LteHelper>();
    Ptr<PointToPointEpcHelper> epc = CreateObject<PointToPointEpcHelper>();
    lte->SetEpcHelper(epc);
    lte->SetSchedulerType("ns3::PfFfMacScheduler");
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
    p2p.SetDeviceAttribute("DataRate", StringValue("100Gbps"));
    p2p.SetDeviceAttribute("Mtu", UintegerValue(1500));
    p2p.SetChannelAttribute("Delay", StringValue("10ms"));
    NetDeviceContainer inetDevs = p2p.Install(pgw, server);
    Ipv4AddressHelper addr;
    addr.SetBase("1.0.0.0", "255.0.0.0");
    Ipv4InterfaceContainer inetIf = addr.Assign(inetDevs);
    Ipv4Address serverAddr = inetIf.GetAddress(1);
    Ipv4StaticRoutingHelper srh;
    srh.GetStaticRouting(server->GetObject<Ipv4>())
        ->AddNetworkRouteTo(Ipv4Address("7.0.0.0"), Ipv4Mask("255.0.0.0"), 1);

    NodeContainer enbC;
    enbC.Create(1);
    NodeContainer ueC;
    ueC.Create(ues);
    MobilityHelper mob;
    mob.SetMobilityModel("ns3::ConstantPositionMobilityModel");
    Ptr<ListPositionAllocator> enbPos = CreateObject<ListPositionAllocator>();
    enbPos->Add(Vector(0, 0, 0));
    mob.SetPositionAllocator(enbPos);
    mob.Install(enbC);
    Ptr<UniformDiscPositionAllocator> disc = CreateObject<UniformDiscPositionAllocator>();
    disc->SetRho(radius);
    disc->SetX(0);
    disc->SetY(0);
    disc->AssignStreams(7);
    mob.SetPositionAllocator(disc);
    mob.Install(ueC);

    NetDeviceContainer enbDevs = lte->InstallEnbDevice(enbC);
    NetDeviceContainer ueDevs = lte->InstallUeDevice(ueC);
    internet.Install(ueC);
    Ipv4InterfaceContainer ueIf = epc->AssignUeIpv4Address(ueDevs);
    for (uint32_t i = 0; i < ues; ++i)
    {
        srh.GetStaticRouting(ueC.Get(i)->GetObject<Ipv4>())
            ->SetDefaultRoute(epc->GetUeDefaultGatewayAddress(), 1);
    }
    lte->Attach(ueDevs, enbDevs.Get(0));

    std::vector<Ptr<PacketSink>> sinks;
    for (uint32_t i = 0; i < ues; ++i)
    {
        uint16_t port = 5000 + i;
        PacketSinkHelper sinkHelper("ns3::TcpSocketFactory",
                                    InetSocketAddress(Ipv4Address::GetAny(), port));
        ApplicationContainer sa = sinkHelper.Install(ueC.Get(i));
        sa.Start(Seconds(0.0));
        sinks.push_back(DynamicCast<PacketSink>(sa.Get(0)));
        InetSocketAddress dst(ueIf.GetAddress(i), port);
        ApplicationContainer ca;
        if (rate > 0)
        {
            OnOffHelper src("ns3::TcpSocketFactory", dst);
            src.SetAttribute("DataRate", DataRateValue(DataRate(rate)));
            src.SetAttribute("PacketSize", UintegerValue(packetSize));
            src.SetAttribute("OnTime", StringValue("ns3::ConstantRandomVariable[Constant=1]"));
            src.SetAttribute("OffTime", StringValue("ns3::ConstantRandomVariable[Constant=0]"));
            ca = src.Install(server);
        }
        else
        {
            BulkSendHelper src("ns3::TcpSocketFactory", dst);
            src.SetAttribute("MaxBytes", UintegerValue(0));
            src.SetAttribute("SendSize", UintegerValue(packetSize));
            ca = src.Install(server);
        }
        ca.Start(Seconds(start));
        ca.Stop(Seconds(duration - drain));
    }

    FlowMonitorHelper fmh;
    NodeContainer monitored;
    monitored.Add(server);
    monitored.Add(ueC);
    Ptr<FlowMonitor> fm = fmh.Install(monitored);

    Simulator::Schedule(Seconds(0.4), &ConnectRlcDrops);
    Simulator::Stop(Seconds(duration));
    Simulator::Run();

    fm->CheckForLostPackets();
    Ptr<Ipv4FlowClassifier> cls = DynamicCast<Ipv4FlowClassifier>(fmh.GetClassifier());
    double delaySum = 0, jitterSum = 0;
    uint64_t tx = 0, rx = 0;
    uint32_t nFlows = 0, nJitter = 0;
    for (const auto& [id, st] : fm->GetFlowStats())
    {
        Ipv4FlowClassifier::FiveTuple ft = cls->FindFlow(id);
        if (ft.sourceAddress != serverAddr || st.txPackets == 0)
        {
            continue; // the ACK flows
        }
        ++nFlows;
        tx += st.txPackets;
        rx += st.rxPackets;
        if (st.rxPackets > 0)
        {
            delaySum += st.delaySum.GetSeconds() * 1e3 / st.rxPackets;
        }
        if (st.rxPackets > 1)
        {
            jitterSum += st.jitterSum.GetSeconds() * 1e3 / (st.rxPackets - 1);
            ++nJitter;
        }
    }
    double window = duration - drain - start;
    double gpSum = 0;
    std::ostringstream per;
    for (size_t i = 0; i < sinks.size(); ++i)
    {
        double g = sinks[i]->GetTotalRx() * 8.0 / window / 1e6;
        gpSum += g;
        per << (i ? "," : "") << Num(g);
    }
    Simulator::Destroy();

    std::ostringstream js;
    js << "{\"simulator\":\"ns-3.37\",\"scenario\":\"ccv\",\"cc\":\"" << cc << "\",\"rlc\":\""
       << rlc << "\",\"packet_size\":" << packetSize << ",\"rate_bps\":" << rate
       << ",\"rlc_buf_bytes\":" << rlcBuf << ",\"ues\":" << ues << ",\"duration\":"
       << Num(duration) << ",\"seed\":" << seed << ",\"flows\":" << nFlows
       << ",\"goodput_mbps\":" << Num(gpSum / ues)
       << ",\"delay_ms\":" << Num(nFlows ? delaySum / nFlows : 0)
       << ",\"jitter_ms\":" << Num(nJitter ? jitterSum / nJitter : 0)
       << ",\"loss_ratio\":" << Num(tx ? double(tx - rx) / tx : 0) << ",\"tx_packets\":" << tx
       << ",\"rx_packets\":" << rx << ",\"rlc_tx_drops\":" << g_rlcDrops
       << ",\"per_ue_goodput_mbps\":[" << per.str() << "]}";
    std::cout << js.str() << std::endl;
    return 0;
}
